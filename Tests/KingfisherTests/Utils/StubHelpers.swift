//
//  StubHelpers.swift
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
//  Ported to Alcedo: the same helpers, with a real HTTP server on the loopback interface
//  behind them instead of Nocilla (see LoopbackStubs.swift).

import Foundation
@testable import Alcedo

@discardableResult
func stub(_ url: URL,
          data: Data,
          statusCode: Int = 200,
          length: Int? = nil,
          headers: [String: String] = [:]
) -> LSStubResponseDSL {
    var response = TestHTTPServer.Response(status: statusCode, headers: headers.map { ($0.key, $0.value) }, body: data)
    // A real server cannot announce a `Content-Length` other than the body's without cutting
    // the body short: `length` is sent only when it is the body's length.
    if let length = length, length == data.count {
        response.contentLength = .value(length)
    }
    return LSNocilla.sharedInstance().stub(url, response)
}

func delayedStub(_ url: URL,
                 data: Data,
                 statusCode: Int = 200,
                 length: Int? = nil,
                 headers: [String: String] = [:]
) -> LSStubResponseDSL {
    let result = stub(url, data: data, statusCode: statusCode, length: length, headers: headers)
    return result.delay()!
}

func stub(_ url: URL, errorCode: Int) {
    let error = NSError(domain: "stubError", code: errorCode, userInfo: nil)
    stub(url, error: error)
}

func stub(_ url: URL, error: any Error) {
    // The server resets the connection: the client sees a network failure.
    LSNocilla.sharedInstance().stub(url, .reset)
}

func clearStubs(afterCancelling downloader: ImageDownloader?) {
    downloader?.cancelAll()
    LSNocilla.sharedInstance().clearStubs()
}

func clearStubs(afterCancelling manager: KingfisherManager?) {
    clearStubs(afterCancelling: manager?.downloader)
}
