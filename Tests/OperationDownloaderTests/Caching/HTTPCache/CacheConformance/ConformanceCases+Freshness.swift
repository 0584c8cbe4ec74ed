import Foundation

// cc-freshness, cc-parse, age-parse, expires, expires-parse (see ConformanceModel.swift).
extension ConformanceCase {
    static let freshnessCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ id: String, _ kind: Kind, _ deps: [String], _ steps: [ConformanceStep], note: String? = nil) {
            cases.append(ConformanceCase(suite: "cc-freshness", id: id, kind: kind, dependsOn: deps, steps: steps, note: note))
        }
        add("freshness-none", .check, [], [ConformanceStep(pauseAfter: true), expectStep(.notCached)])
        add("freshness-max-age", .optional, ["freshness-none"],
            [setupStep([field("Cache-Control", "max-age=3600")]), expectStep(.cached)])
        add("freshness-max-age-stale", .required, ["freshness-max-age"], [becomeStaleStep(), expectStep(.notCached)])
        add("freshness-max-age-0", .required, ["freshness-none"], [setupStep([field("Cache-Control", "max-age=0")]), expectStep(.notCached)])
        for (id, value) in [("freshness-max-age-max-minus-1", "2147483647"), ("freshness-max-age-max", "2147483648"),
                            ("freshness-max-age-max-plus-1", "2147483649"), ("freshness-max-age-max-plus", "99999999999")] {
            add(id, .optional, ["freshness-none"], [setupStep([field("Cache-Control", "max-age=\(value)")]), expectStep(.cached)])
        }
        add("freshness-max-age-age", .required, ["freshness-max-age"],
            [setupStep([date("Date", 0), field("Cache-Control", "max-age=3600"), field("Age", "7200")]), expectStep(.notCached)])
        add("freshness-max-age-date", .check, ["freshness-max-age"],
            [setupStep([date("Date", -7200), field("Cache-Control", "max-age=3600")]), expectStep(.notCached)])
        add("freshness-max-age-expires", .optional, ["freshness-max-age"],
            [setupStep([field("Cache-Control", "max-age=3600"), date("Expires", -7200), date("Date", 0)]), expectStep(.cached)])
        add("freshness-max-age-expires-invalid", .optional, ["freshness-max-age"],
            [setupStep([field("Cache-Control", "max-age=3600"), field("Expires", "0", checked: false), date("Date", 0)]),
             expectStep(.cached)])
        add("freshness-max-age-0-expires", .required, ["freshness-none"],
            [setupStep([date("Expires", 3600), field("Cache-Control", "max-age=0"), date("Date", 0)]), expectStep(.notCached)])
        add("freshness-max-age-extension", .optional, ["freshness-max-age"],
            [setupStep([field("Cache-Control", "foobar, max-age=3600")]), expectStep(.cached)])
        add("freshness-max-age-case-insenstive", .optional, ["freshness-max-age"],
            [setupStep([field("Cache-Control", "MaX-aGe=3600")]), expectStep(.cached)])
        add("freshness-max-age-negative", .required, ["freshness-none"],
            [setupStep([field("Cache-Control", "max-age=-3600")]), expectStep(.notCached)])
        add("freshness-max-age-s-maxage-private", .required, ["freshness-max-age"],
            [setupStep([field("Cache-Control", "s-maxage=3600, max-age=1")]), expectStep(.notCached)])
        add("freshness-max-age-s-maxage-private-multiple", .required, ["freshness-max-age"],
            [setupStep([field("Cache-Control", "s-maxage=3600"), field("Cache-Control", "max-age=1")]), expectStep(.notCached)])
        return cases + ccParseCases + ageParseCases + expiresCases
    }()

    private static let ccParseCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ id: String, _ kind: Kind, _ deps: [String], _ headers: [ConformanceField], _ expected: ConformanceExpectation) {
            cases.append(ConformanceCase(suite: "cc-parse", id: id, kind: kind, dependsOn: deps,
                                         steps: [setupStep(headers), expectStep(expected)]))
        }
        let cc = { (value: String) in field("Cache-Control", value, checked: false) }
        add("freshness-max-age-two-fresh-stale-sameline", .check, ["freshness-none"], [cc("max-age=1800, max-age=1")], .cached)
        add("freshness-max-age-two-fresh-stale-sepline", .check, ["freshness-none"], [cc("max-age=1800"), cc("max-age=1")], .cached)
        add("freshness-max-age-two-stale-fresh-sameline", .check, ["freshness-none"], [cc("max-age=1, max-age=1800")], .cached)
        add("freshness-max-age-two-stale-fresh-sepline", .check, ["freshness-none"], [cc("max-age=1"), cc("max-age=1800")], .cached)
        add("freshness-max-age-quoted", .check, ["freshness-max-age"], [cc("max-age=\"3600\"")], .cached)
        add("freshness-max-age-ignore-quoted", .required, ["freshness-max-age"], [cc("extension=\"max-age=3600\", max-age=1")], .notCached)
        add("freshness-max-age-ignore-quoted-rev", .required, ["freshness-max-age"], [cc("max-age=1, extension=\"max-age=3600\"")], .notCached)
        add("freshness-max-age-space-before-equals", .check, ["freshness-none"], [cc("max-age =3600")], .notCached)
        add("freshness-max-age-space-after-equals", .check, ["freshness-none"], [cc("max-age= 3600")], .notCached)
        add("freshness-max-age-leading-zero", .required, ["freshness-none"], [cc("max-age=003600")], .cached)
        add("freshness-max-age-single-quoted", .required, ["freshness-none"], [cc("max-age='3600'")], .notCached)
        add("freshness-max-age-decimal-zero", .check, ["freshness-none"], [cc("max-age=3600.0")], .cached)
        add("freshness-max-age-decimal-five", .check, ["freshness-none"], [cc("max-age=3600.5")], .cached)
        add("freshness-max-age-a100", .check, ["freshness-none"], [cc("max-age=a3600")], .cached)
        add("freshness-max-age-100a", .check, ["freshness-none"], [cc("max-age=3600a")], .cached)
        return cases
    }()

    private static let ageParseCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ id: String, _ kind: Kind, maxAge: Int = 3600, _ ages: [String], _ expected: ConformanceExpectation) {
            let headers = [date("Date", 0), field("Cache-Control", "max-age=\(maxAge)")] + ages.map { field("Age", $0, checked: false) }
            cases.append(ConformanceCase(suite: "age-parse", id: id, kind: kind, dependsOn: ["freshness-max-age-age"],
                                         steps: [setupStep(headers), expectStep(expected)]))
        }
        add("age-parse-nonnumeric", .required, ["abc"], .cached)
        add("age-parse-negative", .required, ["-7200"], .cached)
        add("age-parse-float", .required, ["7200.0"], .cached)
        add("age-parse-large-minus-one", .required, ["2147483647"], .notCached)
        add("age-parse-large", .required, ["2147483648"], .notCached)
        add("age-parse-larger", .required, ["2147483649"], .notCached)
        add("age-parse-suffix", .required, ["7200, 0"], .notCached)
        add("age-parse-prefix", .required, ["0, 7200"], .cached)
        add("age-parse-suffix-twoline", .required, ["7200", "0"], .notCached)
        add("age-parse-prefix-twoline", .required, ["0", "7200"], .cached)
        add("age-parse-dup-0", .required, ["0, 0"], .cached)
        add("age-parse-dup-0-twoline", .required, ["0", "0"], .cached)
        add("age-parse-dup-old", .required, maxAge: 10_000, ["3600", "3600"], .cached)
        add("age-parse-parameter", .check, ["7200;foo=bar"], .notCached)
        add("age-parse-numeric-parameter", .check, ["7200;foo=111"], .notCached)
        return cases
    }()

    private static let expiresCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ suite: String, _ id: String, _ kind: Kind, _ deps: [String], _ headers: [ConformanceField],
                 _ expected: ConformanceExpectation, pause: Bool = true) {
            cases.append(ConformanceCase(suite: suite, id: id, kind: kind, dependsOn: deps,
                                         steps: [setupStep(headers, pause: pause), expectStep(expected)]))
        }
        let future = ["freshness-expires-future"]
        add("expires", "freshness-expires-future", .optional, ["freshness-none"], [date("Expires", 30 * 86_400), date("Date", 0)], .cached)
        add("expires", "freshness-expires-past", .required, future, [date("Expires", -30 * 86_400), date("Date", 0)], .notCached)
        add("expires", "freshness-expires-present", .required, ["freshness-none"], [date("Expires", 0), date("Date", 0)], .notCached,
            pause: false)
        add("expires", "freshness-expires-old-date", .required, future, [date("Expires", 300), date("Date", 400)], .notCached)
        add("expires", "freshness-expires-invalid", .required, future, [field("Expires", "0", checked: false), date("Date", 0)], .notCached)
        add("expires", "freshness-expires-invalid-date", .optional, future, [field("Date", "foo", checked: false), date("Expires", 10)],
            .cached, pause: false)
        add("expires", "freshness-expires-age-slow-date", .required, future,
            [date("Date", -10), date("Expires", 10), field("Age", "25")], .notCached, pause: false)
        add("expires", "freshness-expires-age-fast-date", .required, future,
            [date("Date", 10), date("Expires", 20), field("Age", "15")], .notCached, pause: false)

        let expires = { (value: String) in field("Expires", value, checked: false) }
        for (id, value) in [("freshness-expires-32bit", "Tue, 19 Jan 2038 14:14:08 GMT"),
                            ("freshness-expires-far-future", "Sun, 21 Nov 2286 04:46:39 GMT"),
                            ("freshness-expires-rfc850", "Thursday, 18-Aug-50 02:01:18 GMT"),
                            ("freshness-expires-ansi-c", "Thu Aug  8 02:01:18 2050"),
                            ("freshness-expires-wrong-case-weekday", "THU, 18 Aug 2050 02:01:18 GMT"),
                            ("freshness-expires-wrong-case-month", "Thu, 18 AUG 2050 02:01:18 GMT"),
                            ("freshness-expires-wrong-case-tz", "Thu, 18 Aug 2050 02:01:18 gMT")] {
            add("expires-parse", id, .optional, future, [expires(value), date("Date", 0)], .cached)
        }
        for (id, value, pause) in [("freshness-expires-invalid-utc", "Thu, 18 Aug 2050 02:01:18 UTC", true),
                                   ("freshness-expires-invalid-aest", "Thu, 18 Aug 2050 02:01:18 AEST", true),
                                   ("freshness-expires-invalid-2-digit-year", "Thu, 18 Aug 50 02:01:18 GMT", true),
                                   ("freshness-expires-invalid-no-comma", "Thu 18 Aug 2050 02:01:18 GMT", true),
                                   ("freshness-expires-invalid-multiple-spaces", "Thu, 18  Aug  2050 02:01:18 GMT", false),
                                   ("freshness-expires-invalid-date-dashes", "Thu, 18-Aug-2050 02:01:18 GMT", false),
                                   ("freshness-expires-invalid-time-periods", "Thu, 18 Aug 2050 02.01.18 GMT", false),
                                   ("freshness-expires-invalid-1-digit-hour", "Thu, 18 Aug 2050 2:01:18 GMT", false)] {
            add("expires-parse", id, .required, future, [expires(value), date("Date", 0)], .notCached, pause: pause)
        }
        add("expires-parse", "freshness-expires-invalid-multiple-lines", .required, future,
            [expires("Thu, 18 Aug 2050 2:01:18 GMT"), expires("Thu, 18 Aug 2050 2:01:19 GMT"), date("Date", 0)], .notCached, pause: false)
        return cases
    }()
}
