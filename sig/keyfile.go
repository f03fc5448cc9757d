package sig

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// KeyType is the kind of key LoadOrGenerateKey makes.
type KeyType uint8

// Key types.
const (
	// KeyRSA2048 is what Mastodon and every server verify; the default.
	KeyRSA2048 KeyType = iota
	// KeyEd25519 is for FEP-521a Multikeys and Data Integrity proofs.
	KeyEd25519
)

// ErrKeyFileMode is returned when a key file can be read by other users.
var ErrKeyFileMode = errors.New("sig: key file is readable by others")

// LoadOrGenerateKey returns the private key in the PEM file at path,
// first generating one of type kt and writing it there (PKCS#8, mode
// 0600) when the file does not exist. A file other users can read or
// write (any permission bit for "other") is refused with ErrKeyFileMode,
// as ssh refuses such a key. Two processes starting at once agree on one
// key: the file is written aside and hard-linked into place only if still
// absent (so the directory must be on a filesystem with hard links).
func LoadOrGenerateKey(path string, kt KeyType) (crypto.Signer, error) {
	if k, err := loadKeyFile(path); !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	var key crypto.Signer
	switch kt {
	case KeyRSA2048:
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		key = k
	case KeyEd25519:
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		key = k
	default:
		return nil, fmt.Errorf("%w: key type %d", ErrUnsupportedKey, kt)
	}
	pemBytes, err := MarshalPrivateKeyPEM(key)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; say so for umask-proofing.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.Write(pemBytes); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another process won the race: use its key.
			return loadKeyFile(path)
		}
		return nil, err
	}
	return privateSigner(key)
}

func loadKeyFile(path string) (crypto.Signer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o007 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %v; chmod 600 it", ErrKeyFileMode, path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10)) // an RSA-16384 PEM is ~13 KB
	if err != nil {
		return nil, err
	}
	return ParsePrivateKeyPEM(b)
}
