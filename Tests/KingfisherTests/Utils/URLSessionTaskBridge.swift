// Kingfisher's tests make a `SessionDataTask` from a `URLSessionDataTask`
// (`SessionDataTask(task: URLSession.shared.dataTask(with: url))`) to build a
// `.taskCancelled(task:token:)` error. Alcedo's downloads do not go through `URLSession`, and its
// library does not link FoundationNetworking, so the tests get that initializer here: the task
// stands for a request to the data task's URL.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Alcedo

extension SessionDataTask {
    /// A task for the request `task` would send.
    convenience init(task: URLSessionDataTask) {
        self.init(originalURL: task.originalRequest?.url)
    }
}
