//
//  SharedTestTypes.swift
//  Kingfisher
//
//  Created by Wei Wang on 2018/10/12.
//
//  Copyright (c) 2019 Wei Wang <onevcat@gmail.com>
//
//  Permission is hereby granted, free of charge, to any person obtaining a copy
//  of this software and associated documentation files (the "Software"), to deal
//  in the Software without restriction, including without limitation the rights
//  to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
//  copies of the Software, and to permit persons to whom the Software is
//  furnished to do so, subject to the following conditions:
//
//  The above copyright notice and this permission notice shall be included in
//  all copies or substantial portions of the Software.
//
//  THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
//  IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
//  FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
//  AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
//  LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
//  OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
//  THE SOFTWARE.
//
//  Test types that Kingfisher defines in KingfisherManagerTests.swift (`SimpleImageDataProvider`,
//  `ActorArray`, `CallingChecker`), which other test files use; copied here as Kingfisher wrote them while that file
//  is not ported yet.

import Foundation
import XCTest
@testable import Alcedo

actor CallingChecker {
    var called = false
    func mark() {
        called = true
    }
    
    func checkCancelBehavior(
        stub: LSStubResponseDSL,
        block: @escaping () async throws -> Void
    ) async throws {
        let task = Task {
            do {
                _ = try await block()
                XCTFail()
            } catch {
                mark()
                if let error = error as? KingfisherError {
                    let isExpectedCancellation: Bool
                    if case .requestError(reason: .asyncTaskContextCancelled) = error {
                        isExpectedCancellation = true
                    } else {
                        isExpectedCancellation = error.isTaskCancelled
                    }
                    XCTAssertTrue(isExpectedCancellation)
                } else {
                    XCTAssertTrue(error is CancellationError)
                }
            }
        }
        try await Task.sleep(nanoseconds: NSEC_PER_SEC / 10)
        task.cancel()
        _ = stub.go()
        await task.value
        XCTAssertTrue(called)
    }
}

struct SimpleImageDataProvider: ImageDataProvider, @unchecked Sendable {
    let cacheKey: String
    let provider: () -> (Result<Data, any Error>)
    
    func data(handler: @escaping (Result<Data, any Error>) -> Void) {
        handler(provider())
    }
    
    struct E: Error {}
}

actor ActorArray<Element> {
    var value: [Element]
    init(_ value: [Element]) {
        self.value = value
    }
    
    func append(_ newElement: Element) {
        value.append(newElement)
    }
}
