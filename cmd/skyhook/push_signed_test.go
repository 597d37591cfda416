package main

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/skyhook-go/skyhook/api/imagesig"
)

// push --sign-key signs what it pushed; pull and validate --verify-key
// accept it, and refuse a set pushed unsigned, one signed by another key,
// and a tag moved to other content (the tampered set), writing nothing.
func TestSignedPushVerifiedPull(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	keys := t.TempDir()
	writeKeyPair := func(name, password string) (string, string) {
		private, public, err := imagesig.GenerateKeyPair([]byte(password))
		if err != nil {
			t.Fatal(err)
		}
		priv, pub := filepath.Join(keys, name+".key"), filepath.Join(keys, name+".pub")
		if err := os.WriteFile(priv, private, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pub, public, 0o644); err != nil {
			t.Fatal(err)
		}
		return priv, pub
	}
	releaseKey, releasePub := writeKeyPair("release", "pw")
	otherKey, _ := writeKeyPair("other", "pw")
	t.Setenv(imagesig.PasswordEnv, "pw")
	set := t.TempDir()
	if err := os.WriteFile(filepath.Join(set, "gpu.yaml"), []byte(goodSkyhook), 0o644); err != nil {
		t.Fatal(err)
	}
	push := func(tag, key string) {
		t.Helper()
		// Each tag its own content: the same files make the same artifact.
		if err := os.WriteFile(filepath.Join(set, "tag.yaml"), []byte("# "+tag+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"push", set, "oci://" + host + "/fleet/gpu:" + tag, "--insecure"}
		if key != "" {
			args = append(args, "--sign-key", key)
		}
		if out, err := run(t, args...); err != nil || (key != "" && !strings.Contains(out, "signed "+host+"/fleet/gpu@sha256:")) {
			t.Fatalf("push %s: %v\n%s", tag, err, out)
		}
	}
	push("signed", releaseKey)
	push("unsigned", "")
	push("other-key", otherKey)

	out := t.TempDir()
	if msg, err := run(t, "pull", "oci://"+host+"/fleet/gpu:signed", out, "--insecure", "--verify-key", releasePub); err != nil {
		t.Fatalf("pull of the signed set: %v\n%s", err, msg)
	}
	if got, err := os.ReadFile(filepath.Join(out, "gpu.yaml")); err != nil || string(got) != goodSkyhook {
		t.Errorf("pulled %q, %v", got, err)
	}
	if msg, err := run(t, "validate", "oci://"+host+"/fleet/gpu:signed", "--insecure", "--verify-key", releasePub); err != nil || !strings.Contains(msg, ":signed: ok") {
		t.Errorf("validate of the signed set: %v\n%s", err, msg)
	}

	// The signed tag moved to other content (a tampered set, unsigned).
	if err := os.WriteFile(filepath.Join(set, "gpu.yaml"), []byte(strings.Replace(goodSkyhook, "1.2.0", "6.6.6", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	push("tampered", "")
	if err := crane.Tag(host+"/fleet/gpu:tampered", "signed", crane.Insecure); err != nil {
		t.Fatal(err)
	}
	if tags, err := crane.ListTags(host+"/fleet/gpu", crane.Insecure); err != nil || len(tags) < 3 {
		t.Fatalf("tags %v, %v", tags, err)
	}
	for tag, reason := range map[string]string{"unsigned": "no signature is attached", "other-key": "no signature verifies", "signed": "no signature is attached"} {
		dir := t.TempDir()
		msg, err := run(t, "pull", "oci://"+host+"/fleet/gpu:"+tag, dir, "--insecure", "--verify-key", releasePub)
		if err == nil || !strings.Contains(err.Error(), reason) {
			t.Errorf("pull of %s: %v, want a refusal saying %q\n%s", tag, err, reason, msg)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("pull of %s wrote %d files though refused", tag, len(entries))
		}
		if msg, err := run(t, "validate", "oci://"+host+"/fleet/gpu:"+tag, "--insecure", "--verify-key", releasePub); err == nil || !strings.Contains(msg, reason) {
			t.Errorf("validate of %s: %v, want a refusal saying %q\n%s", tag, err, reason, msg)
		}
	}
	// Without --verify-key the unsigned set pulls as before.
	if msg, err := run(t, "pull", "oci://"+host+"/fleet/gpu:unsigned", t.TempDir(), "--insecure"); err != nil {
		t.Errorf("pull without --verify-key: %v\n%s", err, msg)
	}
	// The wrong password is a clear error, and nothing is signed.
	t.Setenv(imagesig.PasswordEnv, "wrong")
	if msg, err := run(t, "push", set, "oci://"+host+"/fleet/gpu:badpw", "--insecure", "--sign-key", releaseKey); err == nil || !strings.Contains(err.Error(), "password") {
		t.Errorf("push with the wrong password: %v\n%s", err, msg)
	}
	if _, err := crane.Digest(host+"/fleet/gpu:badpw", crane.Insecure); err == nil {
		t.Error("a push whose key did not load pushed anyway")
	}
}
