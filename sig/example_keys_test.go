package sig_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"log"

	"github.com/fedkit/fedkit/sig"
)

func exampleKey() ed25519.PrivateKey {
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	return k
}

// ExampleParseKeyID checks a key ID as a Signature names it, and refuses one
// with surrounding whitespace.
func ExampleParseKeyID() {
	id, err := sig.ParseKeyID("https://a.example/actor#main-key")
	fmt.Println(id.Document(), err)
	_, err = sig.ParseKeyID(" https://a.example/actor#main-key")
	fmt.Println(errors.Is(err, sig.ErrMalformed))
	// Output:
	// https://a.example/actor <nil>
	// true
}

// ExampleParsePrivateKeyPEM reads a PKCS#8 or PKCS#1 private key, as servers
// store them.
func ExampleParsePrivateKeyPEM() {
	key, err := sig.ParsePrivateKeyPEM([]byte(testRSAPEM))
	if err != nil {
		panic(err)
	}
	pemText, _ := sig.MarshalPublicKeyPEM(key.Public())
	fmt.Println(string(pemText[:26]))
	// Output: -----BEGIN PUBLIC KEY-----
}

// ExampleParsePublicKeyPEM reads the publicKeyPem of an actor document.
func ExampleParsePublicKeyPEM() {
	pub, err := sig.ParsePublicKeyPEM([]byte("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----\n"))
	fmt.Printf("%T %v\n", pub, err)
	// Output: ed25519.PublicKey <nil>
}

// ExampleMarshalPrivateKeyPEM writes a key for storage and reads it back.
func ExampleMarshalPrivateKeyPEM() {
	key := exampleKey()
	pemText, err := sig.MarshalPrivateKeyPEM(key)
	if err != nil {
		panic(err)
	}
	back, err := sig.ParsePrivateKeyPEM(pemText)
	fmt.Println(string(pemText[:27]), back.Public().(ed25519.PublicKey).Equal(key.Public()), err)
	// Output: -----BEGIN PRIVATE KEY----- true <nil>
}

// ExampleMarshalPublicKeyPEM writes the publicKeyPem an actor document
// publishes.
func ExampleMarshalPublicKeyPEM() {
	pemText, err := sig.MarshalPublicKeyPEM(exampleKey().Public())
	fmt.Println(string(pemText[:26]), err)
	// Output: -----BEGIN PUBLIC KEY----- <nil>
}

// ExampleParseMultikey reads and writes the publicKeyMultibase of a
// Multikey.
func ExampleParseMultikey() {
	pub, err := sig.ParseMultikey("z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2")
	fmt.Printf("%T %v\n", pub, err)
	s, _ := sig.FormatMultikey(pub)
	fmt.Println(s)
	// Output:
	// ed25519.PublicKey <nil>
	// z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2
}

// ExampleFormatMultikey writes the publicKeyMultibase of a Multikey.
func ExampleFormatMultikey() {
	pub, _ := sig.ParsePublicKeyPEM([]byte("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----\n"))
	mk, err := sig.FormatMultikey(pub)
	fmt.Println(mk[:4], err)
	// Output: z6Mk <nil>
}

// ExampleLoadOrGenerateKey keeps a server's actor key in a file across
// restarts.
func ExampleLoadOrGenerateKey() {
	// The first run writes actor.pem (0600); later runs load it.
	key, err := sig.LoadOrGenerateKey("/var/lib/myserver/actor.pem", sig.KeyRSA2048)
	if errors.Is(err, sig.ErrKeyFileMode) {
		log.Fatal("chmod 600 the key file")
	}
	if err != nil {
		log.Fatal(err)
	}
	_ = key
}
