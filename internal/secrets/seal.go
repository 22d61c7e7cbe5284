package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"strconv"
)

// sealVersion leads every ciphertext: the format is version, nonce, then
// AES-256-GCM's sealed text with its tag.
const sealVersion = 1

// errOpen is any ciphertext that does not open: a wrong key, a damaged row,
// or a row moved to another workspace or provider.
var errOpen = errors.New("the sealed key does not open")

// aad binds a sealed key to its row, so a ciphertext copied to another
// workspace or provider does not open.
func aad(workspaceID int64, provider string) []byte {
	return []byte("rindactl provider key\x00" + strconv.FormatInt(workspaceID, 10) + "\x00" + provider)
}

func (k MasterKey) aead() cipher.AEAD {
	block, err := aes.NewCipher(k.b[:])
	if err != nil {
		panic(err) // a 32-byte key always makes a cipher
	}
	g, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return g
}

// seal encrypts plaintext for (workspaceID, provider) with a fresh random
// nonce.
func (k MasterKey) seal(plaintext []byte, workspaceID int64, provider string) []byte {
	return k.sealAAD(plaintext, aad(workspaceID, provider))
}

// sealAAD encrypts plaintext bound to additional data ad.
func (k MasterKey) sealAAD(plaintext, ad []byte) []byte {
	g := k.aead()
	out := make([]byte, 1+g.NonceSize(), 1+g.NonceSize()+len(plaintext)+g.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return g.Seal(out, out[1:1+g.NonceSize()], plaintext, ad)
}

// open decrypts what seal made for (workspaceID, provider).
func (k MasterKey) open(ciphertext []byte, workspaceID int64, provider string) ([]byte, error) {
	return k.openAAD(ciphertext, aad(workspaceID, provider))
}

// openAAD decrypts what sealAAD made with the same ad.
func (k MasterKey) openAAD(ciphertext, ad []byte) ([]byte, error) {
	g := k.aead()
	if len(ciphertext) < 1+g.NonceSize()+g.Overhead() || ciphertext[0] != sealVersion {
		return nil, errOpen
	}
	nonce, sealed := ciphertext[1:1+g.NonceSize()], ciphertext[1+g.NonceSize():]
	plain, err := g.Open(nil, nonce, sealed, ad)
	if err != nil {
		return nil, errOpen
	}
	return plain, nil
}
