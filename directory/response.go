package directory

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Response limits.
const (
	// MaxResponseBytes is the most response body bytes read; one more
	// makes the response invalid as too large.
	MaxResponseBytes = 16 << 10
	// MaxRetryAfter caps an honoured remote Retry-After.
	MaxRetryAfter = 24 * time.Hour
	// maxMessageBytes bounds the (discarded) remote error message.
	maxMessageBytes = 256
)

// checkFraming applies the checks every Directory response shares:
// no redirect, no content coding, exactly one Content-Type of exactly
// application/json.
func checkFraming(sc int, h http.Header) Reason {
	if sc >= 300 && sc < 400 {
		return ReasonRedirect
	}
	if ce := h.Values("Content-Encoding"); len(ce) > 0 && !(len(ce) == 1 && strings.EqualFold(ce[0], "identity")) {
		return ReasonEncoding
	}
	if ct := h.Values("Content-Type"); len(ct) != 1 || ct[0] != "application/json" {
		return ReasonContentType
	}
	return ""
}

// decodeLifecycle validates one lifecycle response for (v, op, actor). It
// returns the outcome, a *ResponseError for a valid error envelope, or an
// *InvalidResponseError. now is the completion time used for HTTP-date
// Retry-After values.
func decodeLifecycle(v Version, op Operation, actor string, sc int, h http.Header, body []byte, now time.Time) (Outcome, error) {
	invalid := func(r Reason) (Outcome, error) { return "", &InvalidResponseError{StatusCode: sc, Reason: r} }
	switch {
	case sc == 200, sc == 201 && op == OpRegister:
	case sc >= 300 && sc < 400:
		return invalid(ReasonRedirect)
	case sc == 400, sc == 401, sc == 403, sc == 409, sc == 413, sc == 429, sc == 500, sc == 503:
	default:
		return invalid(ReasonStatusCode)
	}
	if r := checkFraming(sc, h); r != "" {
		return invalid(r)
	}
	f, err := decodeObject(body)
	if err != nil {
		return invalid(reasonOf(err))
	}
	if sc < 300 {
		if err := f.only("protocol_version", "operation", "outcome", "relay_actor"); err != nil {
			return invalid(reasonOf(err))
		}
		pv, err := f.integer("protocol_version")
		if err != nil {
			return invalid(reasonOf(err))
		}
		if pv != int64(v) {
			return invalid(ReasonVersion)
		}
		o, err := f.str("operation")
		if err != nil {
			return invalid(reasonOf(err))
		}
		if Operation(o) != op {
			return invalid(ReasonOperation)
		}
		out, err := f.str("outcome")
		if err != nil {
			return invalid(reasonOf(err))
		}
		if !Outcome(out).fits(op) {
			return invalid(ReasonOutcome)
		}
		a, err := f.str("relay_actor")
		if err != nil {
			return invalid(reasonOf(err))
		}
		if a != actor {
			return invalid(ReasonActor)
		}
		return Outcome(out), nil
	}
	code, r := decodeErrorEnvelope(f, v)
	if r != "" {
		return invalid(r)
	}
	if !code.statusFits(sc) {
		return invalid(ReasonCodeStatus)
	}
	re := &ResponseError{Version: v, Operation: op, StatusCode: sc, Code: code}
	if (sc == 429 && code == CodeRateLimited) || (sc == 503 && code == CodeInternalError) {
		d, ok := parseRetryAfter(h.Values("Retry-After"), now)
		if !ok {
			return invalid(ReasonRetryAfter)
		}
		re.RetryAfter = d
		if d > 0 {
			re.RetryAt = now.Add(d)
		}
	}
	return "", re
}

// decodeErrorEnvelope validates {"protocol_version":v,"error":{"code":..,"message":..}}
// and discards the message after checking its bounds.
func decodeErrorEnvelope(f strictFields, v Version) (ErrorCode, Reason) {
	if err := f.only("protocol_version", "error"); err != nil {
		return "", reasonOf(err)
	}
	pv, err := f.integer("protocol_version")
	if err != nil {
		return "", reasonOf(err)
	}
	if pv != int64(v) {
		return "", ReasonVersion
	}
	e, err := f.sub("error")
	if err != nil {
		return "", reasonOf(err)
	}
	if err := e.only("code", "message"); err != nil {
		return "", reasonOf(err)
	}
	code, err := e.str("code")
	if err != nil {
		return "", reasonOf(err)
	}
	msg, err := e.str("message")
	if err != nil {
		return "", reasonOf(err)
	}
	if len(msg) < 1 || len(msg) > maxMessageBytes {
		return "", ReasonMessage
	}
	c := ErrorCode(code)
	if !c.statusFits(400) && !c.statusFits(401) && !c.statusFits(403) && !c.statusFits(409) &&
		!c.statusFits(429) && !c.statusFits(500) && !c.statusFits(503) {
		return "", ReasonErrorCode
	}
	return c, ""
}

// parseRetryAfter validates Retry-After: absent or "0" means no bound;
// delta-seconds or an HTTP-date in the future (against now) is a bound,
// capped at MaxRetryAfter; anything else, a past date or several field
// lines is invalid.
func parseRetryAfter(lines []string, now time.Time) (time.Duration, bool) {
	switch len(lines) {
	case 0:
		return 0, true
	case 1:
	default:
		return 0, false
	}
	s := lines[0]
	if s == "" {
		return 0, false
	}
	if strings.Trim(s, "0123456789") == "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n > uint64(MaxRetryAfter/time.Second) {
			// Digits only, so the sole parse failure is overflow: far
			// beyond the cap. Compare before multiplying, which could wrap.
			return MaxRetryAfter, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(s)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		return 0, false
	}
	return min(d, MaxRetryAfter), true
}
