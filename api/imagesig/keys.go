package imagesig

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// The PEM types of a private key that LoadPrivateKey reads: cosign's
// encrypted key (`cosign generate-key-pair`, under either name cosign has
// written), and an unencrypted PKCS #8 key (`openssl genpkey`).
const (
	sigstoreKeyType = "ENCRYPTED SIGSTORE PRIVATE KEY"
	cosignKeyType   = "ENCRYPTED COSIGN PRIVATE KEY"
	pkcs8KeyType    = "PRIVATE KEY"
)

// PasswordEnv holds the password of an encrypted signing key, under the
// name cosign reads it from, so that one key file and one variable serve
// cosign and this project's signing commands alike.
const PasswordEnv = "COSIGN_PASSWORD"

// LoadPrivateKeyFile is LoadPrivateKey of the file at path, with the
// password in $COSIGN_PASSWORD (PasswordEnv).
func LoadPrivateKeyFile(path string) (sign.Keypair, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return LoadPrivateKey(raw, []byte(os.Getenv(PasswordEnv)))
}

// LoadPrivateKey reads an ECDSA P-256 private key to sign with: cosign's
// encrypted key file, decrypted with password (as COSIGN_PASSWORD does for
// cosign), or an unencrypted PKCS #8 key.
func LoadPrivateKey(pemBytes, password []byte) (sign.Keypair, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("not a PEM private key")
	}
	der := block.Bytes
	switch block.Type {
	case sigstoreKeyType, cosignKeyType:
		// cosign's format: scrypt and NaCl secretbox over the PKCS #8 key,
		// go-securesystemslib's encrypted package (what cosign uses).
		plain, err := encrypted.Decrypt(block.Bytes, password)
		if err != nil {
			return nil, fmt.Errorf("decrypting the key (is the password right?): %w", err)
		}
		der = plain
	case pkcs8KeyType:
	default:
		return nil, fmt.Errorf("a PEM block of type %q is not a private key this reads (%s, %s)", block.Type, sigstoreKeyType, pkcs8KeyType)
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("not a PKCS #8 private key: %w", err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("the key is a %T; signing takes an ECDSA P-256 key, as cosign generates", key)
	}
	return keypair{ec}, nil
}

// GenerateKeyPair makes an ECDSA P-256 key pair in cosign's format: the
// private key encrypted with password, and the public key, both PEM.
func GenerateKeyPair(password []byte) (private, public []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	sealed, err := encrypted.Encrypt(der, password)
	if err != nil {
		return nil, nil, err
	}
	public, err = cryptoutils.MarshalPublicKeyToPEM(key.Public())
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: sigstoreKeyType, Bytes: sealed}), public, nil
}

// keypair is sigstore-go's signing key interface over a key of one's own
// (sigstore-go v1.3 ships only ephemeral ones). It signs SHA-256 digests
// with the standard library's ECDSA.
type keypair struct{ key *ecdsa.PrivateKey }

func (k keypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}

func (k keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}

// GetHint is the base64 SHA-256 of the public key, as sigstore-go's own
// keypairs hint.
func (k keypair) GetHint() []byte {
	der, err := x509.MarshalPKIXPublicKey(k.key.Public())
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(der)
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

func (k keypair) GetKeyAlgorithm() string        { return "ECDSA" }
func (k keypair) GetPublicKey() crypto.PublicKey { return k.key.Public() }

func (k keypair) GetPublicKeyPem() (string, error) {
	raw, err := cryptoutils.MarshalPublicKeyToPEM(k.key.Public())
	return string(raw), err
}

// SignData signs the SHA-256 of data and returns the signature and digest.
func (k keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	digest := sha256.Sum256(data)
	sig, err := k.key.Sign(rand.Reader, digest[:], crypto.SHA256)
	if err != nil {
		return nil, nil, err
	}
	return sig, digest[:], nil
}

var _ sign.Keypair = keypair{}
