package directory

import (
	"strings"
	"testing"
)

const tOrigin = "https://directory.example"

func statusDoc(schema string, extra string) string {
	base := `{"enrollment_open":true,"lifecycle_available":true,"lifecycle_enabled":true,` +
		`"public_base_url":"https://directory.example","schema_version":` + schema +
		`,"service":"activity-relay-directory","version":"1.3.0-rc4"`
	return base + extra + "}\n"
}

const listing = `,"public_listing_available":true,"public_listing_enabled":true`

// TestParseStatus: the schemas and the invalid documents of spec section 6.
func TestParseStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		doc  string
		want Reason // "" = valid
		neg  Version
	}{
		{"schema 2", statusDoc("2", ""), "", V1},
		{"schema 3", statusDoc("3", listing), "", V1},
		{"schema 4 [1,2,3]", statusDoc("4", listing+`,"lifecycle_protocol_versions":[1,2,3]`), "", V3},
		{"schema 4 spec example", `{"enrollment_open":true,"lifecycle_available":true,"lifecycle_enabled":true,"lifecycle_protocol_versions":[1,2,3],"public_base_url":"https://directory.example","public_listing_available":true,"public_listing_enabled":true,"schema_version":4,"service":"activity-relay-directory","version":"1.3.0-rc4"}`, "", V3},
		{"schema 4 [1]", statusDoc("4", listing+`,"lifecycle_protocol_versions":[1]`), "", V1},
		{"schema 4 [1,2]", statusDoc("4", listing+`,"lifecycle_protocol_versions":[1,2]`), "", V2},
		{"schema 4 [1,3]", statusDoc("4", listing+`,"lifecycle_protocol_versions":[1,3]`), "", V3},
		{"schema 4 [1,2,3,4] future", statusDoc("4", listing+`,"lifecycle_protocol_versions":[1,2,3,4]`), "", V3},
		{"schema 4 [1,4] only unknown higher", statusDoc("4", listing+`,"lifecycle_protocol_versions":[1,4]`), "", V1},
		{"schema 1", statusDoc("1", ""), ReasonStatusDoc, 0},
		{"schema 5", statusDoc("5", listing+`,"lifecycle_protocol_versions":[1]`), ReasonStatusDoc, 0},
		{"schema 2 with listing", statusDoc("2", listing), ReasonUnknownField, 0},
		{"schema 3 without listing", statusDoc("3", ""), ReasonUnknownField, 0},
		{"schema 3 with version list", statusDoc("3", listing+`,"lifecycle_protocol_versions":[1,2]`), ReasonUnknownField, 0},
		{"schema 4 without version list", statusDoc("4", listing), ReasonUnknownField, 0},
		{"schema 4 empty list", statusDoc("4", listing+`,"lifecycle_protocol_versions":[]`), ReasonStatusDoc, 0},
		{"schema 4 list without 1", statusDoc("4", listing+`,"lifecycle_protocol_versions":[2,3]`), ReasonStatusDoc, 0},
		{"schema 4 unordered", statusDoc("4", listing+`,"lifecycle_protocol_versions":[1,3,2]`), ReasonStatusDoc, 0},
		{"schema 4 repeated", statusDoc("4", listing+`,"lifecycle_protocol_versions":[1,1,2]`), ReasonStatusDoc, 0},
		{"schema 4 nine entries", statusDoc("4", listing+`,"lifecycle_protocol_versions":[1,2,3,4,5,6,7,8,9]`), ReasonStatusDoc, 0},
		{"schema 4 string entries", statusDoc("4", listing+`,"lifecycle_protocol_versions":["1"]`), ReasonStatusDoc, 0},
		{"schema 4 null list", statusDoc("4", listing+`,"lifecycle_protocol_versions":null`), ReasonStatusDoc, 0},
		{"unknown field", statusDoc("2", `,"motd":"hi"`), ReasonUnknownField, 0},
		{"duplicate name", statusDoc("2", `,"service":"activity-relay-directory"`), ReasonDuplicate, 0},
		{"trailing value", statusDoc("2", "") + "{}", ReasonTrailing, 0},
		{"wrong service", strings.Replace(statusDoc("2", ""), "activity-relay-directory", "other", 1), ReasonStatusDoc, 0},
		{"version with space", strings.Replace(statusDoc("2", ""), "1.3.0-rc4", "1.3 rc4", 1), ReasonStatusDoc, 0},
		{"version with newline", strings.Replace(statusDoc("2", ""), "1.3.0-rc4", `1.3\n`, 1), ReasonStatusDoc, 0},
		{"version with ESC", strings.Replace(statusDoc("2", ""), "1.3.0-rc4", `\u001b[31m`, 1), ReasonStatusDoc, 0},
		{"version too long", strings.Replace(statusDoc("2", ""), "1.3.0-rc4", strings.Repeat("1", 65), 1), ReasonStatusDoc, 0},
		{"base url trailing slash", strings.Replace(statusDoc("2", ""), `example"`, `example/"`, 1), ReasonStatusBaseURL, 0},
		{"base url other origin", strings.Replace(statusDoc("2", ""), "directory.example", "evil.example", 1), ReasonStatusBaseURL, 0},
		{"bool as string", strings.Replace(statusDoc("2", ""), `"enrollment_open":true`, `"enrollment_open":"true"`, 1), ReasonStatusDoc, 0},
		{"schema as string", strings.Replace(statusDoc("2", ""), `"schema_version":2`, `"schema_version":"2"`, 1), ReasonStatusDoc, 0},
		{"empty", "", ReasonJSON, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, r := parseStatus([]byte(tc.doc), tOrigin)
			if r != tc.want {
				t.Fatalf("reason %q, want %q", r, tc.want)
			}
			if tc.want == "" && s.Negotiate() != tc.neg {
				t.Fatalf("negotiated %v, want %v", s.Negotiate(), tc.neg)
			}
		})
	}
}
