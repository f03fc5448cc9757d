// Package yamledit durably edits one DIRECTORIES entry of a relay's YAML
// configuration: it sets `enabled: false` (Disable) or deletes the entry
// (Remove) and leaves every other byte of the file alone, comments, blank
// lines and key order included.
//
// The edit is textual and structural: the entry is found by its lines, only
// the `enabled` value (or the entry's lines) change, and the result is
// accepted only when it re-parses to exactly the intended document. Files
// are replaced crash-safely: symlinks and non-regular files are refused; a
// same-directory temporary file with the original's mode and owner is
// written and synced; the original is kept as `<config>.activity-relay.bak`;
// the temporary file is renamed over the config; the directory is synced.
// Recovery from a crash at any step is the next edit: it first sweeps the
// `.<config>.*.tmp` siblings a crashed edit left, and keeps a backup that
// a crash left hard-linked to the (still original) config instead of
// linking it again.
//
//	changed, err := yamledit.Disable("/etc/relay/config.yml", "https://directory.example", nil)
package yamledit
