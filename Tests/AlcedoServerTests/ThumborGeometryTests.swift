@testable import AlcedoServer
import Alcedo
import Testing

/// ``ThumborGeometry`` against thumbor 7.8's own transformer: the sizes of
/// tests/fixtures/transformer_test_data.py (not fit-in, not `orig`) and tiny and extreme sizes
/// on a few source sizes, each run through thumbor's `Transformer.img_operation_worker` with a
/// recording engine (its engine's rounding of a proportional side, no manual crop): the crop it
/// asked for and the size it resized to.
@Suite("thumbor's crop and resize geometry")
struct ThumborGeometryTests {
    enum H: Double { case left = 0, center = 0.5, right = 1 }
    enum V: Double { case top = 0, middle = 0.5, bottom = 1 }

    struct Case: CustomStringConvertible {
        let source: PixelSize, width: Int, height: Int, h: H, v: V
        let points: [ThumborGeometry.FocalPoint]
        let crop: ThumborCrop?, resize: PixelSize?

        init(_ sw: Int, _ sh: Int, _ tw: Int, _ th: Int, _ h: H, _ v: V, _ points: [(Double, Double, Double)],
             crop: (Int, Int, Int, Int)?, resize: (Int, Int)?) {
            source = PixelSize(width: sw, height: sh)
            (width, height, self.h, self.v) = (tw, th, h, v)
            self.points = points.map { ThumborGeometry.FocalPoint(x: $0.0, y: $0.1, weight: $0.2) }
            self.crop = crop.map { ThumborCrop(left: $0.0, top: $0.1, right: $0.2, bottom: $0.3) }
            self.resize = resize.map { PixelSize(width: $0.0, height: $0.1) }
        }

        var description: String { "\(source) to \(width)x\(height) \(h) \(v) \(points.map { "(\($0.x),\($0.y))" })" }
    }

    static let cases: [Case] = [
        Case(800, 600, 400, 150, .center, .middle, [], crop: (0, 150, 800, 450), resize: (400, 150)),
        Case(600, 800, 150, 400, .center, .middle, [], crop: (150, 0, 450, 800), resize: (150, 400)),
        Case(600, 800, 300, 400, .center, .middle, [], crop: nil, resize: (300, 400)),
        Case(800, 600, 0, 0, .center, .middle, [], crop: nil, resize: nil),
        Case(800, 600, 400, 0, .center, .middle, [], crop: nil, resize: (400, 300)),
        Case(200, 140, 180, 100, .center, .middle, [], crop: (0, 14, 200, 125), resize: (180, 100)),
        Case(200, 200, 100, 100, .center, .middle, [(100, 100, 1)], crop: nil, resize: (100, 100)),
        Case(400, 200, 100, 100, .center, .middle, [(100, 100, 1)], crop: (0, 0, 200, 200), resize: (100, 100)),
        Case(400, 200, 100, 200, .center, .middle, [(100, 50, 1), (300, 50, 1)], crop: (150, 0, 250, 200), resize: nil),
        Case(400, 200, 100, 200, .center, .middle, [(100, 150, 1), (300, 150, 1)], crop: (150, 0, 250, 200), resize: nil),
        Case(400, 200, 100, 200, .center, .middle, [(100, 50, 1), (100, 150, 1)], crop: (50, 0, 150, 200), resize: nil),
        Case(400, 200, 100, 200, .center, .middle, [(300, 50, 1), (300, 150, 1)], crop: (250, 0, 350, 200), resize: nil),
        Case(200, 400, 100, 200, .center, .middle, [(100, 50, 1), (300, 50, 1)], crop: nil, resize: (100, 200)),
        Case(200, 400, 100, 200, .center, .middle, [(100, 150, 1), (300, 150, 1)], crop: nil, resize: (100, 200)),
        Case(200, 400, 100, 200, .center, .middle, [(100, 50, 1), (100, 150, 1)], crop: nil, resize: (100, 200)),
        Case(200, 400, 100, 200, .center, .middle, [(300, 50, 1), (300, 150, 1)], crop: nil, resize: (100, 200)),
        Case(400, 200, 100, 100, .center, .middle, [(50, 100, 1), (50, 300, 1), (150, 100, 1), (150, 300, 1)], crop: (0, 0, 200, 200), resize: (100, 100)),
        Case(800, 600, 400, 300, .center, .bottom, [], crop: nil, resize: (400, 300)),
        Case(700, 300, 150, 300, .center, .bottom, [], crop: (275, 0, 425, 300), resize: nil),
        Case(700, 300, 300, 150, .right, .bottom, [], crop: (100, 0, 700, 300), resize: (300, 150)),
        Case(700, 300, 300, 150, .left, .bottom, [], crop: (0, 0, 600, 300), resize: (300, 150)),
        Case(700, 300, 150, 300, .left, .bottom, [], crop: (0, 0, 150, 300), resize: nil),
        Case(700, 300, 150, 300, .right, .bottom, [], crop: (550, 0, 700, 300), resize: nil),
        Case(300, 800, 200, 300, .center, .bottom, [], crop: (0, 350, 300, 800), resize: (200, 300)),
        Case(300, 800, 200, 300, .left, .bottom, [], crop: (0, 350, 300, 800), resize: (200, 300)),
        Case(300, 800, 200, 300, .right, .bottom, [], crop: (0, 350, 300, 800), resize: (200, 300)),
        Case(500, 600, 300, 250, .center, .bottom, [], crop: (0, 183, 500, 600), resize: (300, 250)),
        Case(500, 600, 300, 250, .left, .bottom, [], crop: (0, 183, 500, 600), resize: (300, 250)),
        Case(500, 600, 300, 250, .right, .bottom, [], crop: (0, 183, 500, 600), resize: (300, 250)),
        Case(600, 800, 300, 0, .right, .bottom, [], crop: nil, resize: (300, 400)),
        Case(600, 800, 300, 0, .center, .bottom, [], crop: nil, resize: (300, 400)),
        Case(600, 800, 300, 0, .left, .bottom, [], crop: nil, resize: (300, 400)),
        Case(600, 800, 250, 0, .left, .bottom, [], crop: nil, resize: (250, 333)),
        Case(600, 800, 250, 0, .right, .bottom, [], crop: nil, resize: (250, 333)),
        Case(600, 800, 250, 0, .center, .bottom, [], crop: nil, resize: (250, 333)),
        Case(600, 800, 0, 400, .right, .bottom, [], crop: nil, resize: (300, 400)),
        Case(600, 800, 0, 400, .left, .bottom, [], crop: nil, resize: (300, 400)),
        Case(600, 800, 0, 400, .center, .bottom, [], crop: nil, resize: (300, 400)),
        Case(600, 800, 0, 350, .center, .bottom, [], crop: nil, resize: (262, 350)),
        Case(600, 800, 0, 350, .left, .bottom, [], crop: nil, resize: (262, 350)),
        Case(600, 800, 0, 350, .right, .bottom, [], crop: nil, resize: (262, 350)),
        Case(800, 300, 400, 150, .center, .middle, [], crop: nil, resize: (400, 150)),
        Case(800, 300, 400, 150, .right, .middle, [], crop: nil, resize: (400, 150)),
        Case(800, 300, 400, 150, .left, .middle, [], crop: nil, resize: (400, 150)),
        Case(700, 300, 300, 150, .center, .middle, [], crop: (50, 0, 650, 300), resize: (300, 150)),
        Case(700, 300, 300, 150, .left, .middle, [], crop: (0, 0, 600, 300), resize: (300, 150)),
        Case(700, 300, 300, 150, .right, .middle, [], crop: (100, 0, 700, 300), resize: (300, 150)),
        Case(700, 300, 150, 300, .center, .middle, [], crop: (275, 0, 425, 300), resize: nil),
        Case(700, 300, 150, 300, .left, .middle, [], crop: (0, 0, 150, 300), resize: nil),
        Case(700, 300, 150, 300, .right, .middle, [], crop: (550, 0, 700, 300), resize: nil),
        Case(350, 700, 200, 600, .left, .middle, [], crop: (0, 0, 234, 700), resize: (200, 600)),
        Case(350, 700, 200, 600, .center, .middle, [], crop: (58, 0, 292, 700), resize: (200, 600)),
        Case(350, 700, 200, 600, .right, .middle, [], crop: (116, 0, 350, 700), resize: (200, 600)),
        Case(500, 600, 300, 250, .left, .middle, [], crop: (0, 92, 500, 509), resize: (300, 250)),
        Case(500, 600, 300, 250, .center, .middle, [], crop: (0, 92, 500, 509), resize: (300, 250)),
        Case(500, 600, 300, 250, .right, .middle, [], crop: (0, 92, 500, 509), resize: (300, 250)),
        Case(1, 1, 0, 0, .left, .middle, [], crop: nil, resize: nil),
        Case(1, 1, 0, 0, .center, .middle, [], crop: nil, resize: nil),
        Case(1, 1, 0, 0, .right, .middle, [], crop: nil, resize: nil),
        Case(200, 400, 0, 1, .left, .middle, [], crop: (0, 0, 0, 400), resize: (1, 1)),
        Case(200, 200, 16, 16, .left, .middle, [], crop: nil, resize: (16, 16)),
        Case(800, 600, 400, 150, .left, .top, [], crop: (0, 0, 800, 300), resize: (400, 150)),
        Case(800, 600, 400, 150, .center, .top, [], crop: (0, 0, 800, 300), resize: (400, 150)),
        Case(800, 600, 400, 150, .right, .top, [], crop: (0, 0, 800, 300), resize: (400, 150)),
        Case(600, 800, 150, 400, .left, .top, [], crop: (0, 0, 300, 800), resize: (150, 400)),
        Case(600, 800, 150, 400, .center, .top, [], crop: (150, 0, 450, 800), resize: (150, 400)),
        Case(600, 800, 150, 400, .right, .top, [], crop: (300, 0, 600, 800), resize: (150, 400)),
        Case(800, 60, 400, 15, .left, .top, [], crop: (0, 0, 800, 30), resize: (400, 15)),
        Case(800, 60, 400, 15, .center, .top, [], crop: (0, 0, 800, 30), resize: (400, 15)),
        Case(800, 60, 400, 15, .right, .top, [], crop: (0, 0, 800, 30), resize: (400, 15)),
        Case(60, 800, 15, 400, .left, .top, [], crop: (0, 0, 30, 800), resize: (15, 400)),
        Case(60, 800, 15, 400, .center, .top, [], crop: (15, 0, 45, 800), resize: (15, 400)),
        Case(60, 800, 15, 400, .right, .top, [], crop: (30, 0, 60, 800), resize: (15, 400)),
        Case(8, 6, 4, 2, .left, .top, [], crop: (0, 0, 8, 4), resize: (4, 2)),
        Case(8, 6, 4, 2, .center, .top, [], crop: (0, 0, 8, 4), resize: (4, 2)),
        Case(8, 6, 4, 2, .right, .top, [], crop: (0, 0, 8, 4), resize: (4, 2)),
        Case(6, 8, 2, 4, .left, .top, [], crop: (0, 0, 4, 8), resize: (2, 4)),
        Case(6, 8, 2, 4, .center, .top, [], crop: (1, 0, 5, 8), resize: (2, 4)),
        Case(6, 8, 2, 4, .right, .top, [], crop: (2, 0, 6, 8), resize: (2, 4)),
        Case(800, 600, 400, 300, .left, .top, [], crop: nil, resize: (400, 300)),
        Case(800, 600, 400, 300, .center, .top, [], crop: nil, resize: (400, 300)),
        Case(800, 600, 400, 300, .right, .top, [], crop: nil, resize: (400, 300)),
        Case(800, 600, 800, 600, .left, .top, [], crop: nil, resize: nil),
        Case(800, 600, 800, 600, .center, .top, [], crop: nil, resize: nil),
        Case(800, 600, 800, 600, .right, .top, [], crop: nil, resize: nil),
        Case(600, 450, 2, 1, .left, .top, [], crop: (0, 0, 600, 300), resize: (2, 1)),
        Case(600, 450, 2, 1, .center, .middle, [], crop: (0, 75, 600, 375), resize: (2, 1)),
        Case(600, 450, 2, 1, .right, .bottom, [], crop: (0, 150, 600, 450), resize: (2, 1)),
        Case(600, 450, 1, 2, .left, .top, [], crop: (0, 0, 225, 450), resize: (1, 2)),
        Case(600, 450, 1, 2, .center, .middle, [], crop: (188, 0, 413, 450), resize: (1, 2)),
        Case(600, 450, 1, 2, .right, .bottom, [], crop: (375, 0, 600, 450), resize: (1, 2)),
        Case(600, 450, 3, 1, .left, .top, [], crop: (0, 0, 600, 200), resize: (3, 1)),
        Case(600, 450, 3, 1, .center, .middle, [], crop: (0, 125, 600, 325), resize: (3, 1)),
        Case(600, 450, 3, 1, .right, .bottom, [], crop: (0, 250, 600, 450), resize: (3, 1)),
        Case(600, 450, 1, 3, .left, .top, [], crop: (0, 0, 150, 450), resize: (1, 3)),
        Case(600, 450, 1, 3, .center, .middle, [], crop: (225, 0, 375, 450), resize: (1, 3)),
        Case(600, 450, 1, 3, .right, .bottom, [], crop: (450, 0, 600, 450), resize: (1, 3)),
        Case(600, 450, 1, 300, .left, .top, [], crop: (0, 0, 2, 450), resize: (1, 300)),
        Case(600, 450, 1, 300, .center, .middle, [], crop: (299, 0, 301, 450), resize: (1, 300)),
        Case(600, 450, 1, 300, .right, .bottom, [], crop: (598, 0, 600, 450), resize: (1, 300)),
        Case(600, 450, 300, 1, .left, .top, [], crop: (0, 0, 600, 2), resize: (300, 1)),
        Case(600, 450, 300, 1, .center, .middle, [], crop: (0, 224, 600, 226), resize: (300, 1)),
        Case(600, 450, 300, 1, .right, .bottom, [], crop: (0, 448, 600, 450), resize: (300, 1)),
        Case(600, 450, 4, 3, .left, .top, [], crop: nil, resize: (4, 3)),
        Case(600, 450, 4, 3, .center, .middle, [], crop: nil, resize: (4, 3)),
        Case(600, 450, 4, 3, .right, .bottom, [], crop: nil, resize: (4, 3)),
        Case(600, 450, 1, 1, .left, .top, [], crop: (0, 0, 450, 450), resize: (1, 1)),
        Case(600, 450, 1, 1, .center, .middle, [], crop: (75, 0, 525, 450), resize: (1, 1)),
        Case(600, 450, 1, 1, .right, .bottom, [], crop: (150, 0, 600, 450), resize: (1, 1)),
        Case(600, 450, 3, 4, .left, .top, [], crop: (0, 0, 338, 450), resize: (3, 4)),
        Case(600, 450, 3, 4, .center, .middle, [], crop: (131, 0, 469, 450), resize: (3, 4)),
        Case(600, 450, 3, 4, .right, .bottom, [], crop: (262, 0, 600, 450), resize: (3, 4)),
        Case(600, 450, 2, 0, .left, .top, [], crop: (0, 0, 450, 450), resize: (2, 2)),
        Case(600, 450, 2, 0, .center, .middle, [], crop: (75, 0, 525, 450), resize: (2, 2)),
        Case(600, 450, 2, 0, .right, .bottom, [], crop: (150, 0, 600, 450), resize: (2, 2)),
        Case(600, 450, 0, 2, .left, .top, [], crop: (0, 0, 600, 400), resize: (3, 2)),
        Case(600, 450, 0, 2, .center, .middle, [], crop: (0, 25, 600, 425), resize: (3, 2)),
        Case(600, 450, 0, 2, .right, .bottom, [], crop: (0, 50, 600, 450), resize: (3, 2)),
        Case(600, 450, 1, 0, .left, .top, [], crop: (0, 0, 450, 450), resize: (1, 1)),
        Case(600, 450, 1, 0, .center, .middle, [], crop: (75, 0, 525, 450), resize: (1, 1)),
        Case(600, 450, 1, 0, .right, .bottom, [], crop: (150, 0, 600, 450), resize: (1, 1)),
        Case(600, 450, 0, 1, .left, .top, [], crop: (0, 0, 450, 450), resize: (1, 1)),
        Case(600, 450, 0, 1, .center, .middle, [], crop: (75, 0, 525, 450), resize: (1, 1)),
        Case(600, 450, 0, 1, .right, .bottom, [], crop: (150, 0, 600, 450), resize: (1, 1)),
        Case(600, 450, 3, 2, .left, .top, [], crop: (0, 0, 600, 400), resize: (3, 2)),
        Case(600, 450, 3, 2, .center, .middle, [], crop: (0, 25, 600, 425), resize: (3, 2)),
        Case(600, 450, 3, 2, .right, .bottom, [], crop: (0, 50, 600, 450), resize: (3, 2)),
        Case(600, 450, 4, 1, .left, .top, [], crop: (0, 0, 600, 150), resize: (4, 1)),
        Case(600, 450, 4, 1, .center, .middle, [], crop: (0, 150, 600, 300), resize: (4, 1)),
        Case(600, 450, 4, 1, .right, .bottom, [], crop: (0, 300, 600, 450), resize: (4, 1)),
        Case(201, 99, 2, 1, .left, .top, [], crop: (0, 0, 198, 99), resize: (2, 1)),
        Case(201, 99, 2, 1, .center, .middle, [], crop: (1, 0, 199, 99), resize: (2, 1)),
        Case(201, 99, 2, 1, .right, .bottom, [], crop: (3, 0, 201, 99), resize: (2, 1)),
        Case(201, 99, 1, 2, .left, .top, [], crop: (0, 0, 50, 99), resize: (1, 2)),
        Case(201, 99, 1, 2, .center, .middle, [], crop: (75, 0, 125, 99), resize: (1, 2)),
        Case(201, 99, 1, 2, .right, .bottom, [], crop: (151, 0, 201, 99), resize: (1, 2)),
        Case(201, 99, 3, 1, .left, .top, [], crop: (0, 0, 201, 67), resize: (3, 1)),
        Case(201, 99, 3, 1, .center, .middle, [], crop: (0, 16, 201, 83), resize: (3, 1)),
        Case(201, 99, 3, 1, .right, .bottom, [], crop: (0, 32, 201, 99), resize: (3, 1)),
        Case(201, 99, 1, 3, .left, .top, [], crop: (0, 0, 33, 99), resize: (1, 3)),
        Case(201, 99, 1, 3, .center, .middle, [], crop: (84, 0, 117, 99), resize: (1, 3)),
        Case(201, 99, 1, 3, .right, .bottom, [], crop: (168, 0, 201, 99), resize: (1, 3)),
        Case(201, 99, 1, 300, .left, .top, [], crop: (0, 0, 1, 99), resize: (1, 300)),
        Case(201, 99, 1, 300, .center, .middle, [], crop: (100, 0, 101, 99), resize: (1, 300)),
        Case(201, 99, 1, 300, .right, .bottom, [], crop: (200, 0, 201, 99), resize: (1, 300)),
        Case(201, 99, 300, 1, .left, .top, [], crop: (0, 0, 201, 1), resize: (300, 1)),
        Case(201, 99, 300, 1, .center, .middle, [], crop: (0, 48, 201, 49), resize: (300, 1)),
        Case(201, 99, 300, 1, .right, .bottom, [], crop: (0, 98, 201, 99), resize: (300, 1)),
        Case(201, 99, 4, 3, .left, .top, [], crop: (0, 0, 132, 99), resize: (4, 3)),
        Case(201, 99, 4, 3, .center, .middle, [], crop: (34, 0, 166, 99), resize: (4, 3)),
        Case(201, 99, 4, 3, .right, .bottom, [], crop: (69, 0, 201, 99), resize: (4, 3)),
        Case(201, 99, 1, 1, .left, .top, [], crop: (0, 0, 99, 99), resize: (1, 1)),
        Case(201, 99, 1, 1, .center, .middle, [], crop: (50, 0, 149, 99), resize: (1, 1)),
        Case(201, 99, 1, 1, .right, .bottom, [], crop: (102, 0, 201, 99), resize: (1, 1)),
        Case(201, 99, 3, 4, .left, .top, [], crop: (0, 0, 75, 99), resize: (3, 4)),
        Case(201, 99, 3, 4, .center, .middle, [], crop: (62, 0, 137, 99), resize: (3, 4)),
        Case(201, 99, 3, 4, .right, .bottom, [], crop: (126, 0, 201, 99), resize: (3, 4)),
        Case(201, 99, 2, 0, .left, .top, [], crop: (0, 0, 198, 99), resize: (2, 1)),
        Case(201, 99, 2, 0, .center, .middle, [], crop: (1, 0, 199, 99), resize: (2, 1)),
        Case(201, 99, 2, 0, .right, .bottom, [], crop: (3, 0, 201, 99), resize: (2, 1)),
        Case(201, 99, 0, 2, .left, .top, [], crop: (0, 0, 198, 99), resize: (4, 2)),
        Case(201, 99, 0, 2, .center, .middle, [], crop: (1, 0, 199, 99), resize: (4, 2)),
        Case(201, 99, 0, 2, .right, .bottom, [], crop: (3, 0, 201, 99), resize: (4, 2)),
        Case(201, 99, 1, 0, .left, .top, [], crop: (0, 0, 201, 0), resize: (1, 1)),
        Case(201, 99, 1, 0, .center, .middle, [], crop: (0, 49, 201, 49), resize: (1, 1)),
        Case(201, 99, 1, 0, .right, .bottom, [], crop: (0, 99, 201, 99), resize: (1, 1)),
        Case(201, 99, 0, 1, .left, .top, [], crop: (0, 0, 198, 99), resize: (2, 1)),
        Case(201, 99, 0, 1, .center, .middle, [], crop: (1, 0, 199, 99), resize: (2, 1)),
        Case(201, 99, 0, 1, .right, .bottom, [], crop: (3, 0, 201, 99), resize: (2, 1)),
        Case(201, 99, 3, 2, .left, .top, [], crop: (0, 0, 149, 99), resize: (3, 2)),
        Case(201, 99, 3, 2, .center, .middle, [], crop: (26, 0, 175, 99), resize: (3, 2)),
        Case(201, 99, 3, 2, .right, .bottom, [], crop: (52, 0, 201, 99), resize: (3, 2)),
        Case(201, 99, 4, 1, .left, .top, [], crop: (0, 0, 201, 50), resize: (4, 1)),
        Case(201, 99, 4, 1, .center, .middle, [], crop: (0, 24, 201, 74), resize: (4, 1)),
        Case(201, 99, 4, 1, .right, .bottom, [], crop: (0, 49, 201, 99), resize: (4, 1)),
        Case(7, 5, 2, 1, .left, .top, [], crop: (0, 0, 7, 4), resize: (2, 1)),
        Case(7, 5, 2, 1, .center, .middle, [], crop: (0, 0, 7, 4), resize: (2, 1)),
        Case(7, 5, 2, 1, .right, .bottom, [], crop: (0, 1, 7, 5), resize: (2, 1)),
        Case(7, 5, 1, 2, .left, .top, [], crop: (0, 0, 3, 5), resize: (1, 2)),
        Case(7, 5, 1, 2, .center, .middle, [], crop: (2, 0, 5, 5), resize: (1, 2)),
        Case(7, 5, 1, 2, .right, .bottom, [], crop: (4, 0, 7, 5), resize: (1, 2)),
        Case(7, 5, 3, 1, .left, .top, [], crop: (0, 0, 7, 2), resize: (3, 1)),
        Case(7, 5, 3, 1, .center, .middle, [], crop: (0, 1, 7, 3), resize: (3, 1)),
        Case(7, 5, 3, 1, .right, .bottom, [], crop: (0, 3, 7, 5), resize: (3, 1)),
        Case(7, 5, 1, 3, .left, .top, [], crop: (0, 0, 2, 5), resize: (1, 3)),
        Case(7, 5, 1, 3, .center, .middle, [], crop: (2, 0, 4, 5), resize: (1, 3)),
        Case(7, 5, 1, 3, .right, .bottom, [], crop: (5, 0, 7, 5), resize: (1, 3)),
        Case(7, 5, 1, 300, .left, .top, [], crop: (0, 0, 1, 5), resize: (1, 300)),
        Case(7, 5, 1, 300, .center, .middle, [], crop: (2, 0, 3, 5), resize: (1, 300)),
        Case(7, 5, 1, 300, .right, .bottom, [], crop: (6, 0, 7, 5), resize: (1, 300)),
        Case(7, 5, 300, 1, .left, .top, [], crop: (0, 0, 7, 0), resize: (300, 1)),
        Case(7, 5, 300, 1, .center, .middle, [], crop: (0, 2, 7, 2), resize: (300, 1)),
        Case(7, 5, 300, 1, .right, .bottom, [], crop: (0, 5, 7, 5), resize: (300, 1)),
        Case(7, 5, 4, 3, .left, .top, [], crop: (0, 0, 7, 5), resize: (4, 3)),
        Case(7, 5, 4, 3, .center, .middle, [], crop: (0, 0, 7, 5), resize: (4, 3)),
        Case(7, 5, 4, 3, .right, .bottom, [], crop: (0, 0, 7, 5), resize: (4, 3)),
        Case(7, 5, 1, 1, .left, .top, [], crop: (0, 0, 5, 5), resize: (1, 1)),
        Case(7, 5, 1, 1, .center, .middle, [], crop: (0, 0, 5, 5), resize: (1, 1)),
        Case(7, 5, 1, 1, .right, .bottom, [], crop: (2, 0, 7, 5), resize: (1, 1)),
        Case(7, 5, 3, 4, .left, .top, [], crop: (0, 0, 4, 5), resize: (3, 4)),
        Case(7, 5, 3, 4, .center, .middle, [], crop: (1, 0, 5, 5), resize: (3, 4)),
        Case(7, 5, 3, 4, .right, .bottom, [], crop: (3, 0, 7, 5), resize: (3, 4)),
        Case(7, 5, 2, 0, .left, .top, [], crop: (0, 0, 7, 4), resize: (2, 1)),
        Case(7, 5, 2, 0, .center, .middle, [], crop: (0, 0, 7, 4), resize: (2, 1)),
        Case(7, 5, 2, 0, .right, .bottom, [], crop: (0, 1, 7, 5), resize: (2, 1)),
        Case(7, 5, 0, 2, .left, .top, [], crop: (0, 0, 7, 5), resize: (3, 2)),
        Case(7, 5, 0, 2, .center, .middle, [], crop: (0, 0, 7, 5), resize: (3, 2)),
        Case(7, 5, 0, 2, .right, .bottom, [], crop: (0, 0, 7, 5), resize: (3, 2)),
        Case(7, 5, 1, 0, .left, .top, [], crop: (0, 0, 5, 5), resize: (1, 1)),
        Case(7, 5, 1, 0, .center, .middle, [], crop: (0, 0, 5, 5), resize: (1, 1)),
        Case(7, 5, 1, 0, .right, .bottom, [], crop: (2, 0, 7, 5), resize: (1, 1)),
        Case(7, 5, 0, 1, .left, .top, [], crop: (0, 0, 5, 5), resize: (1, 1)),
        Case(7, 5, 0, 1, .center, .middle, [], crop: (0, 0, 5, 5), resize: (1, 1)),
        Case(7, 5, 0, 1, .right, .bottom, [], crop: (2, 0, 7, 5), resize: (1, 1)),
        Case(7, 5, 3, 2, .left, .top, [], crop: (0, 0, 7, 5), resize: (3, 2)),
        Case(7, 5, 3, 2, .center, .middle, [], crop: (0, 0, 7, 5), resize: (3, 2)),
        Case(7, 5, 3, 2, .right, .bottom, [], crop: (0, 0, 7, 5), resize: (3, 2)),
        Case(7, 5, 4, 1, .left, .top, [], crop: (0, 0, 7, 2), resize: (4, 1)),
        Case(7, 5, 4, 1, .center, .middle, [], crop: (0, 1, 7, 3), resize: (4, 1)),
        Case(7, 5, 4, 1, .right, .bottom, [], crop: (0, 3, 7, 5), resize: (4, 1)),
    ]

    @Test("the crop and the resize thumbor 7.8's transformer makes", arguments: cases)
    func geometry(_ item: Case) {
        let points = item.points.isEmpty ? [ThumborGeometry.alignmentPoint(source: item.source, x: item.h.rawValue, y: item.v.rawValue)]
            : item.points
        let geometry = ThumborGeometry(source: item.source, width: item.width, height: item.height, points: points)
        #expect(geometry.crop == item.crop)
        #expect(geometry.resize == item.resize)
    }

    @Test("stretch() resizes to the completed size without a crop")
    func stretch() {
        let geometry = ThumborGeometry(source: PixelSize(width: 600, height: 450), width: 2, height: 1,
                                       points: [ThumborGeometry.FocalPoint(x: 300, y: 225)], crops: false)
        #expect(geometry.crop == nil)
        #expect(geometry.resize == PixelSize(width: 2, height: 1))
    }

    @Test("a crop of a decoded-smaller source keeps its place: 600x450 cut to 2x1 at 1/8")
    func scaledWindow() {
        let crop = ImgproxyProcessor.scaled(ThumborCrop(left: 0, top: 75, right: 600, bottom: 375),
                                            from: PixelSize(width: 600, height: 450), to: PixelSize(width: 75, height: 57))
        #expect(crop == ThumborCrop(left: 0, top: 10, right: 75, bottom: 48))
        #expect(ImgproxyProcessor.sameAspectRatio(PixelSize(width: 600, height: 450), PixelSize(width: 75, height: 57)))
        #expect(!ImgproxyProcessor.sameAspectRatio(PixelSize(width: 600, height: 450), PixelSize(width: 75, height: 75)))
    }

    @Test("fit_in_resize's size: fit inside, cover (full), turned (adaptive), none when fit-in would enlarge")
    func fitIn() {
        let meadow = PixelSize(width: 800, height: 600)
        #expect(ThumborGeometry.fitIn(source: meadow, targetWidth: 3, targetHeight: 2, adaptive: false, full: false)?.size == PixelSize(width: 3, height: 2))
        // The width is the target's (`/meta` writes it as a float), the height computed; and the other way.
        #expect(ThumborGeometry.fitIn(source: meadow, targetWidth: 100, targetHeight: 300, adaptive: false, full: false)?.keepsWidth == true)
        #expect(ThumborGeometry.fitIn(source: meadow, targetWidth: 300, targetHeight: 100, adaptive: false, full: false)?.keepsWidth == false)
        #expect(ThumborGeometry.fitIn(source: meadow, targetWidth: 2, targetHeight: 2, adaptive: false, full: true)?.size == PixelSize(width: 3, height: 2))
        #expect(ThumborGeometry.fitIn(source: meadow, targetWidth: 1, targetHeight: 1, adaptive: false, full: false)?.size == PixelSize(width: 1, height: 1))
        #expect(ThumborGeometry.fitIn(source: meadow, targetWidth: 1, targetHeight: 4, adaptive: true, full: false)?.size == PixelSize(width: 1, height: 1))
        #expect(ThumborGeometry.fitIn(source: PixelSize(width: 300, height: 700), targetWidth: 1, targetHeight: 3, adaptive: true, full: false)?.size
            == PixelSize(width: 1, height: 2))
        #expect(ThumborGeometry.fitIn(source: PixelSize(width: 256, height: 256), targetWidth: 600, targetHeight: 600, adaptive: false, full: false) == nil)
        #expect(ThumborGeometry.fitIn(source: meadow, targetWidth: 0, targetHeight: 2, adaptive: false, full: true) == nil)
    }

    @Test("several focal() boxes: the centre of mass of their centres, weighted by their areas")
    func focalPoints() {
        let two = [ThumborCrop(left: 0, top: 0, right: 100, bottom: 100), ThumborCrop(left: 700, top: 500, right: 800, bottom: 600)]
        #expect(ThumborPlan.centerOfMass(two, within: nil) == ProcessingOptions.FocusPixel(x: 400, y: 300))
        let three = [ThumborCrop(left: 10, top: 10, right: 30, bottom: 30), ThumborCrop(left: 500, top: 400, right: 700, bottom: 600),
                     ThumborCrop(left: 100, top: 500, right: 300, bottom: 590)]
        #expect(ThumborPlan.centerOfMass(three, within: nil) == ProcessingOptions.FocusPixel(x: 472, y: 510))
        let cropped = [ThumborCrop(left: 0, top: 0, right: 400, bottom: 300), ThumborCrop(left: 760, top: 560, right: 800, bottom: 600)]
        #expect(ThumborPlan.centerOfMass(cropped, within: ThumborCrop(left: 100, top: 0, right: 700, bottom: 600))
            == ProcessingOptions.FocusPixel(x: 200, y: 150))
        #expect(ThumborPlan.centerOfMass([two[1]], within: ThumborCrop(left: 0, top: 0, right: 100, bottom: 100)) == nil)
        // An inverted or empty crop keeps no pixel: thumbor drops it and keeps every point (and
        // the check must not trap on it).
        #expect(ThumborPlan.centerOfMass(two, within: ThumborCrop(left: 700, top: 600, right: 100, bottom: 0))
            == ThumborPlan.centerOfMass(two, within: nil))
        #expect(ThumborPlan.centerOfMass(two, within: ThumborCrop(left: 100, top: 100, right: 100, bottom: 500))
            == ThumborPlan.centerOfMass(two, within: nil))
    }
}
