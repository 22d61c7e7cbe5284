// Package secrets keeps workspaces' own provider API keys sealed in
// Postgres: AES-256-GCM (Go's crypto/aes and crypto/cipher) under a master
// key from RINDA_SECRET_KEY or RINDA_SECRET_KEY_FILE, each ciphertext bound
// to its workspace and provider. It sets, loads and rotates them; no key,
// master or provider, ever appears in an error it returns.
package secrets

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// The variables that carry the master key: the key itself, or a file that
// holds it. Either way the value is 32 random bytes in standard base64
// (`openssl rand -base64 32`).
const (
	KeyEnv     = "RINDA_SECRET_KEY"
	KeyFileEnv = "RINDA_SECRET_KEY_FILE"
)

// keyLen is AES-256's key size.
const keyLen = 32

// MasterKey seals and opens the stored provider keys.
type MasterKey struct{ b [keyLen]byte }

// ID names the key without revealing it: a prefix of a domain-separated
// SHA-256 of it, stored with each sealed row so a wrong key is told apart
// from a damaged row.
func (k MasterKey) ID() string {
	sum := sha256.Sum256(append([]byte("rindactl master key id\x00"), k.b[:]...))
	return hex.EncodeToString(sum[:6])
}

// ConfigError is a master key that is missing, malformed or not the one the
// stored keys were sealed with: configuration, exit 2. Its text never holds
// a key.
type ConfigError struct{ msg string }

func (e *ConfigError) Error() string { return e.msg }

func configErrorf(format string, args ...any) *ConfigError {
	return &ConfigError{msg: fmt.Sprintf(format, args...)}
}

// generateHint says how to make a key, for every message about a bad one.
const generateHint = "32 random bytes in base64, e.g. from 'openssl rand -base64 32'"

// LoadMasterKey reads the master key from RINDA_SECRET_KEY or, when that
// is unset, from the file RINDA_SECRET_KEY_FILE names (getenv is os.Getenv
// in production). ok is false when neither is set.
func LoadMasterKey(getenv func(string) string) (key MasterKey, ok bool, err error) {
	value, file := getenv(KeyEnv), strings.TrimSpace(getenv(KeyFileEnv))
	switch {
	case value != "" && file != "":
		return key, false, configErrorf("both %s and %s are set: set only one", KeyEnv, KeyFileEnv)
	case value != "":
		key, err = ParseMasterKey(KeyEnv, value)
		return key, err == nil, err
	case file != "":
		raw, rerr := os.ReadFile(file)
		if rerr != nil {
			return key, false, configErrorf("%s: cannot read %s: %v", KeyFileEnv, file, pathError(rerr))
		}
		key, err = ParseMasterKey(KeyFileEnv+" ("+file+")", string(raw))
		return key, err == nil, err
	}
	return key, false, nil
}

// ParseMasterKey reads a master key in standard base64 (surrounding space
// ignored); source names where it came from in the error.
func ParseMasterKey(source, value string) (MasterKey, error) {
	var k MasterKey
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
	if err != nil || len(b) != keyLen {
		return k, configErrorf("%s is not a valid master key: use %s", source, generateHint)
	}
	copy(k.b[:], b)
	return k, nil
}

// pathError is a file error's reason without repeating the value of any
// variable (os errors name the path, which the caller already shows).
func pathError(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return "unreadable"
}
