import Foundation
@testable import OperationDownloader

extension ConformanceRunner {
    /// The suite's checks of one step (client/test.mjs: checkResponse and checkServerRequests), on what the
    /// client got (`view`) and what the server received for this step (`sent`, the first request it logged
    /// with this step's number). nil when they pass.
    static func check(_ step: ConformanceStep, number n: Int, view: View, sent: LoggedRequest?, previous: ConformanceStep?,
                      previousTime: Date, token: String) -> String? {
        switch step.expected {
        case .cached?:
            if !view.fromCache { return "response \(n) does not come from the cache" }
        case .notCached?:
            if view.fromCache || sent == nil { return "response \(n) comes from the cache" }
        case .etagValidated?:
            let etag = previous?.headers.last { $0.name.lowercased() == "etag" }.map { resolve($0.value, at: previousTime) }
            guard let etag, let sent, sent.headers["if-none-match"] == etag else {
                return "request \(n) is not conditional on ETag \(etag ?? "-"): If-None-Match \(sent?.headers["if-none-match"] ?? "absent")"
            }
        case .lmValidated?:
            let lm = previous?.headers.last { $0.name.lowercased() == "last-modified" }.map { resolve($0.value, at: previousTime) }
            guard let lm, let sent, sent.headers["if-modified-since"] == lm else {
                return "request \(n) is not conditional on Last-Modified: If-Modified-Since \(sent?.headers["if-modified-since"] ?? "absent")"
            }
        case nil:
            break
        }
        if let failure = checkStatus(step, number: n, view: view) { return failure }
        let serverNow = view.headers["server-now"].flatMap(Double.init).map { Date(timeIntervalSince1970: $0) }
        for (name, check) in step.expectedHeaders {
            let value = view.headers[name.lowercased()]
            switch check {
            case .present:
                if value == nil { return "response \(n) has no \(name)" }
            case .equals(let expected):
                let wanted = resolve(expected, at: serverNow ?? Date(timeIntervalSince1970: 0))
                if value != wanted { return "response \(n) \(name) is \(value ?? "absent"), not \(wanted)" }
            case .greaterThan(let limit):
                guard let value, let number = Int(value), number > limit else {
                    return "response \(n) \(name) is \(value ?? "absent"), not above \(limit)"
                }
            }
        }
        for name in step.expectedMissingHeaders where view.headers[name.lowercased()] != nil {
            return "response \(n) has \(name): \(view.headers[name.lowercased()] ?? "")"
        }
        // A response from the server carries the step's header fields (joined as URLSession joins them).
        if !view.fromCache, sent != nil, view.status != nil {
            var joined: [String: String] = [:]
            for field in step.headers where field.checked && field.name.lowercased() != "date" {
                let value = resolve(field.value, at: serverNow ?? Date(timeIntervalSince1970: 0))
                joined[field.name.lowercased()] = joined[field.name.lowercased()].map { $0 + ", " + value } ?? value
            }
            if !step.magicLocations {
                for (name, value) in joined where view.headers[name] != value {
                    return "response \(n) header \(name) is \(view.headers[name] ?? "absent"), not \(value)"
                }
            }
        }
        if let failure = checkBody(step, number: n, view: view, token: token) { return failure }
        for (name, value) in step.expectedRequestHeaders {
            guard let sent else { return "request \(n) was not sent to the server" }
            if sent.headers[name.lowercased()] != value {
                return "request \(n) header \(name) is \(sent.headers[name.lowercased()] ?? "absent"), not \(value)"
            }
        }
        return nil
    }

    private static func checkStatus(_ step: ConformanceStep, number n: Int, view: View) -> String? {
        let wanted: Int?
        switch step.expectedStatus {
        case .some(let code): wanted = code
        case nil: wanted = step.status ?? 200
        }
        guard let wanted, view.status != wanted else { return nil }
        return "response \(n) status is \(view.status.map(String.init) ?? "none"), not \(wanted)"
    }

    private static func checkBody(_ step: ConformanceStep, number n: Int, view: View, token: String) -> String? {
        guard step.checkBody else { return nil }
        let text = String(decoding: view.body, as: UTF8.self)
        let wanted: String
        if let expected = step.expectedText {
            wanted = expected
        } else if let body = step.body {
            wanted = body
        } else if view.status != 204, view.status != 304, step.method != "HEAD" {
            wanted = token
        } else {
            return nil
        }
        return text == wanted ? nil : "response \(n) body is \"\(text.prefix(40))\", not \"\(wanted.prefix(40))\""
    }
}
