package money

import "testing"

func BenchmarkParseMajor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseMajor("12345.67", "USD"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseMajorHugeExponent shows that a huge exponent is refused
// before any arithmetic.
func BenchmarkParseMajorHugeExponent(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseMajor("1e999999", "USD"); err == nil {
			b.Fatal("accepted")
		}
	}
}

func BenchmarkFormat(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Format(1234567, "USD")
	}
}
