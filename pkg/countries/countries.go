// Package countries knows the ISO 3166-1 alpha-2 country codes.
package countries

import "strings"

// alpha2 lists the 249 officially assigned ISO 3166-1 alpha-2 codes (as
// Debian's iso-codes 4.15 has them), each followed by a space.
const alpha2 = "" +
	"AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE " +
	"BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD " +
	"CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM " +
	"DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF " +
	"GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU " +
	"ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN " +
	"KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME " +
	"MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA " +
	"NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM " +
	"PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI " +
	"SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK " +
	"TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI " +
	"VN VU WF WS YE YT ZA ZM ZW "

// Alpha2Rule says what IsAlpha2 accepts, for error messages.
const Alpha2Rule = "must be an ISO 3166-1 alpha-2 code in capitals, such as CM"

// IsAlpha2 reports whether code is an officially assigned ISO 3166-1
// alpha-2 code, in capital letters ("CM", not "cm" or "XX").
func IsAlpha2(code string) bool {
	return len(code) == 2 && code[0] >= 'A' && code[0] <= 'Z' && code[1] >= 'A' && code[1] <= 'Z' &&
		strings.Contains(alpha2, code+" ")
}

// DialCodeRule says what IsDialCode accepts, for error messages.
const DialCodeRule = "must be + followed by 1 to 4 digits"

// IsDialCode reports whether code is an international dial code: "+" and
// 1 to 4 digits ("+237").
func IsDialCode(code string) bool {
	if len(code) < 2 || len(code) > 5 || code[0] != '+' {
		return false
	}
	for _, c := range code[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
