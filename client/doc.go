// Package client is the guarded HTTP client through which all of fedkit's
// outgoing requests go: fetches, deliveries, WebFinger, NodeInfo, previews
// and media alike.
//
// The guard:
//   - resolves each host once, checks every address it resolves to against
//     the refused ranges (Mastodon's PrivateAddressCheck list, the GoToSocial
//     and Fedify extras, IPv6 outside 2000::/3), and dials exactly the
//     addresses it checked, so DNS rebinding cannot reach an internal
//     address (a name with any refused address is refused whole); host
//     names are not judged by spelling, their addresses are; IPv4-mapped
//     and IPv4-compatible addresses are judged as IPv4, NAT64, 6to4 and
//     Teredo are refused whatever they carry;
//   - follows a GET's (or HEAD's) redirects itself, up to three hops,
//     checking and re-signing each, refusing one from https to http
//     (Config.AllowSchemeDowngrade for development), and never follows any
//     other method's;
//   - caps response bodies at 1 MiB, failing with ErrTooLarge, never a truncated
//     document, and bounds time and header size;
//   - never uses a proxy from the environment.
//
// Config.AllowPrivate admits chosen networks (development, a NAT64 gateway)
// and Config.Policy = PolicyNonLocal admits the private ranges for services
// inside a deployment.
//
// Usage:
//
//	c, err := client.New(nil) // defaults: public addresses only
//	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://social.example/users/alice", nil)
//	req.Header.Set("Accept", "application/activity+json")
//	resp, err := c.DoWith(req, &client.DoOpts{Sign: signer})
//	if err != nil { ... }
//	doc, err := client.ReadAll(resp) // client.ErrTooLarge past 1 MiB
//
// Errors are classified with errors.Is: ErrBlocked, ErrTooLarge,
// ErrTooManyRedirects, ErrRedirectNotFollowed (a redirect of a POST),
// ErrSchemeDowngrade (https redirected to http), ErrRedirectLoop,
// ErrHiddenService, ErrInvalidURL and ErrTimeout. Where the failure knows
// more than its kind, errors.As gets it: *BlockedError (the host, the
// refused address and its range), *TooManyRedirectsError and
// *RedirectError (the redirect's status and Location). Policy.Refuses
// exposes the address classification itself, and Client.ValidateURL
// checks a URL under the client's rules without sending it.
package client
