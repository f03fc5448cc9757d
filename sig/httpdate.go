package sig

import (
	"net/http"
	"time"
)

// parseHTTPDate is http.ParseTime with a fast path for the IMF-fixdate
// everyone sends ("Sun, 06 Nov 1994 08:49:37 GMT"), in its exact case
// and with a weekday that matches the date. Anything else, including
// what the fast path would have to normalise, goes to http.ParseTime, so
// the results are the same.
func parseHTTPDate(s string) (time.Time, error) {
	if t, ok := parseIMFFixdate(s); ok {
		return t, nil
	}
	return http.ParseTime(s)
}

var (
	imfDays   = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	imfMonths = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

func parseIMFFixdate(s string) (time.Time, bool) {
	if len(s) != 29 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
		s[19] != ':' || s[22] != ':' || s[25] != ' ' || s[26:] != "GMT" {
		return time.Time{}, false
	}
	num := func(a, b int) int {
		n := 0
		for i := a; i < b; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	day, year, hh, mm, ss := num(5, 7), num(12, 16), num(17, 19), num(20, 22), num(23, 25)
	if day < 1 || year < 0 || hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 59 {
		return time.Time{}, false
	}
	month := 0
	for i, name := range imfMonths {
		if s[8:11] == name {
			month = i + 1
			break
		}
	}
	if month == 0 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hh, mm, ss, 0, time.UTC)
	if t.Day() != day || imfDays[t.Weekday()] != s[:3] {
		return time.Time{}, false // out of range for the month, or another weekday
	}
	return t, true
}
