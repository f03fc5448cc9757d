package colsync_test

import (
	"fmt"

	"github.com/fedkit/fedkit/deliver/colsync"
)

func ExampleDigest() {
	fmt.Println(colsync.Digest([]string{"https://b.example/users/bob"}))
	fmt.Println(colsync.Digest(nil))
	// Output:
	// bc0dbf714059b04d21a5303920e31f9906dcb0526cfe03bcb27915320218393a
	// 0000000000000000000000000000000000000000000000000000000000000000
}

func ExampleDigestOn() {
	ids := []string{"https://b.example/users/bob", "https://c.example/users/carol"}
	fmt.Println(colsync.DigestOn("https://b.example", ids) == colsync.Digest(ids[:1]))
	// Output: true
}

func ExampleXOR() {
	// A receiver XORs each listed follower into the sender's digest; zeros
	// mean the listing balanced.
	d, _ := colsync.XOR("bc0dbf714059b04d21a5303920e31f9906dcb0526cfe03bcb27915320218393a", "https://b.example/users/bob")
	fmt.Println(d == colsync.EmptyDigest)
	// Output: true
}

func ExampleOrigin() {
	o, _ := colsync.Origin("https://B.example:8443/users/bob/inbox")
	fmt.Println(o)
	// Output: https://b.example:8443
}

func ExampleOnOrigin() {
	fmt.Println(colsync.OnOrigin("https://b.example/users/bob", "https://b.example"))
	fmt.Println(colsync.OnOrigin("https://b.example.net/users/eve", "https://b.example"))
	// Output:
	// true
	// false
}

func ExampleParseHeader() {
	h, err := colsync.ParseHeader(`collectionId="https://a.example/users/alice/followers", digest="bc0dbf714059b04d21a5303920e31f9906dcb0526cfe03bcb27915320218393a", url="https://a.example/users/alice/followers_synchronization"`)
	fmt.Println(h.CollectionID, err)
	// Output: https://a.example/users/alice/followers <nil>
}

func ExampleHeader_String() {
	h := colsync.Followers{
		CollectionID: "https://a.example/users/alice/followers",
		URL:          "https://a.example/users/alice/followers_synchronization",
		IDs:          []string{"https://b.example/users/bob"},
	}.HeaderFor("https://b.example")
	fmt.Println(h)
	// Output: collectionId="https://a.example/users/alice/followers", digest="bc0dbf714059b04d21a5303920e31f9906dcb0526cfe03bcb27915320218393a", url="https://a.example/users/alice/followers_synchronization"
}

func ExampleFollowers_HeaderFor() {
	f := colsync.Followers{
		CollectionID: "https://a.example/users/alice/followers",
		URL:          "https://a.example/users/alice/followers_synchronization",
		IDs:          []string{"https://b.example/users/bob", "https://c.example/users/carol"},
	}
	h := f.HeaderFor("https://b.example") // only b.example's followers count
	fmt.Println(h.Digest == colsync.Digest([]string{"https://b.example/users/bob"}))
	// Output: true
}
