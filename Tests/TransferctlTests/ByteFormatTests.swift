import Testing
@testable import transferctl

@Suite struct ByteFormatTests {
    @Test(arguments: [
        (Int64(0), "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
        (1_048_575, "1.0 MiB"), (47_500_000, "45.3 MiB"), (104_857_600, "100.0 MiB"), (1_610_612_736, "1.5 GiB"),
    ])
    func bytes(count: Int64, text: String) {
        #expect(ByteFormat.bytes(count) == text)
    }

    @Test func rates() {
        #expect(ByteFormat.rate(0) == "0 B/s")
        #expect(ByteFormat.rate(.nan) == "0 B/s")
        #expect(ByteFormat.rate(10_695_475) == "10.2 MiB/s")
        #expect(ByteFormat.rate(512) == "512 B/s")
    }

    @Test(arguments: [
        (Double?.none, "--:--"), (0, "0:00"), (4.2, "0:05"), (65, "1:05"), (754, "12:34"), (3723, "1:02:03"),
        (.infinity, "--:--"), (-1, "--:--"), (400_000, "--:--"),
    ])
    func clock(seconds: Double?, text: String) {
        #expect(ByteFormat.clock(seconds) == text)
    }

    @Test(arguments: [
        ("100", Int64?.some(100)), ("2k", 2048), ("2K", 2048), ("1M", 1_048_576), ("1.5m", 1_572_864),
        ("1G", 1_073_741_824), (" 300 ", 300), ("0", nil), ("-5", nil), ("abc", nil), ("M", nil), ("", nil),
        ("1e13", nil),
    ])
    func rateArguments(text: String, rate: Int64?) {
        #expect(ByteFormat.parseRate(text) == rate)
    }
}
