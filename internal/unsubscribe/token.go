// Package unsubscribe lets a recipient leave every sequence of a
// workspace without anyone writing code: a per-enrollment token in
// List-Unsubscribe (an RFC 8058 one-click URL and a mailto: alternative)
// and {{.UnsubscribeURL}}, the small HTTP server that honours it
// (`rindactl unsubscribe serve`), the mailto recognition `inbox tick`
// uses, and Apply, which all of them and `rindactl unsubscribe apply` share.
package unsubscribe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"strings"
)

// A token is base32 (lower case, no padding) of a version byte, the
// enrollment id (8 bytes, big endian) and the first 16 bytes of an
// HMAC-SHA256 of both under the workspace's key: 40 characters of a-z2-7,
// the same in a URL path, a mail subject or a local part whatever a client
// does to case. It names no address; it cannot be forged without the key.
const (
	tokenVersion = 1
	macSize      = 16
	tokenBytes   = 1 + 8 + macSize
	// TokenLen is the length of a token in characters.
	TokenLen = tokenBytes * 8 / 5
	// KeySize is the length of a workspace's key in bytes.
	KeySize = 32
)

var encoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// ErrBadToken is a token that is malformed, names no enrollment or does
// not carry that enrollment's MAC.
var ErrBadToken = errors.New("not a valid unsubscribe token")

// Sign returns the token of enrollment id under the workspace's key.
func Sign(key []byte, enrollmentID int64) string {
	var b [tokenBytes]byte
	b[0] = tokenVersion
	binary.BigEndian.PutUint64(b[1:9], uint64(enrollmentID))
	copy(b[9:], mac(key, b[:9]))
	return encoding.EncodeToString(b[:])
}

// Parse reads a token's enrollment id without checking its MAC (the key
// is the enrollment's workspace's: look it up, then Verify).
func Parse(token string) (int64, error) {
	b, ok := decode(token)
	if !ok {
		return 0, ErrBadToken
	}
	id := int64(binary.BigEndian.Uint64(b[1:9]))
	if id <= 0 {
		return 0, ErrBadToken
	}
	return id, nil
}

// Verify reports whether token carries a valid MAC under key.
func Verify(key []byte, token string) bool {
	b, ok := decode(token)
	return ok && len(key) == KeySize && hmac.Equal(b[9:], mac(key, b[:9]))
}

func decode(token string) ([]byte, bool) {
	if len(token) != TokenLen {
		return nil, false
	}
	b, err := encoding.DecodeString(strings.ToLower(token))
	if err != nil || len(b) != tokenBytes || b[0] != tokenVersion {
		return nil, false
	}
	return b, true
}

func mac(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("rindactl unsubscribe\x00"))
	m.Write(msg)
	return m.Sum(nil)[:macSize]
}
