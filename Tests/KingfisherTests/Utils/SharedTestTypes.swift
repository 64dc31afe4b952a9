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
//  `ActorArray`), which other test files use; copied here as Kingfisher wrote them while that file
//  is not ported yet.

import Foundation
@testable import Alcedo

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
