package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/api/imagesig"
)

// -sign-key is checked before anything is built: it needs -push, and a
// key that does not load fails the release at once.
func TestSignKeyIsCheckedFirst(t *testing.T) {
	private, _, err := imagesig.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "cosign.key")
	if err := os.WriteFile(key, private, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "dist")
	cases := []struct {
		name, password, want string
		push                 bool
	}{
		{"without -push", "pw", "-sign-key needs -push", false},
		{"the wrong password", "wrong", "password", true},
	}
	for _, tc := range cases {
		t.Setenv(imagesig.PasswordEnv, tc.password)
		err := run(context.Background(), options{version: "1.2.3", out: out, license: "LICENSE", images: true, push: tc.push, signKey: key})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %s was written to", tc.name, out)
		}
	}
}
