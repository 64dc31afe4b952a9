import AlcedoTestSupport

/// The seeded generator shared by the test targets (see `AlcedoTestSupport`).
typealias SeededRandom = AlcedoTestSupport.SeededRandom
