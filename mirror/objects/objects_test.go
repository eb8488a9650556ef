package objects_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror/objects"
)

func TestOpenRefusesBadConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  objects.Config
		want string
	}{
		{objects.Config{Endpoint: "127.0.0.1:9000", Bucket: "abc"}, "want http(s)://"},
		{objects.Config{Endpoint: "http://key:secretvalue@127.0.0.1:9000", Bucket: "abc"}, "credentials"},
		{objects.Config{Endpoint: "http://127.0.0.1:9000/path", Bucket: "abc"}, "no path"},
		{objects.Config{Endpoint: "http://127.0.0.1:9000", Bucket: "ab"}, "3 to 63"},
		{objects.Config{Endpoint: "http://127.0.0.1:9000", Bucket: "Upper"}, "lower-case"},
		{objects.Config{Endpoint: "http://127.0.0.1:9000", Bucket: "-abc"}, "starting and ending"},
	} {
		_, err := objects.Open(context.Background(), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secretvalue") {
			t.Errorf("%+v: %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}

func TestPutOnceGetHas(t *testing.T) {
	t.Parallel()
	endpoint, bucket := mirrortest.S3(t)
	ctx := context.Background()
	s, err := objects.Open(ctx, objects.Config{Endpoint: endpoint, Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	// Opening again finds the bucket made by the first.
	if _, err := objects.Open(ctx, objects.Config{Endpoint: endpoint, Bucket: bucket}); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	d := "sha256:" + strings.Repeat("1f", 32)
	if ok, err := s.Has(ctx, d); ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	if _, _, err := s.Get(ctx, d); !errors.Is(err, objects.ErrMissing) {
		t.Fatalf("missing object: %v", err)
	}
	if err := s.Put(ctx, d, bytes.NewReader([]byte("first")), 5); err != nil {
		t.Fatal(err)
	}
	// Immutable: a second upload under the same name changes nothing.
	if err := s.Put(ctx, d, bytes.NewReader([]byte("second!")), 7); err != nil {
		t.Fatal(err)
	}
	rc, size, err := s.Get(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	if string(b) != "first" || size != 5 {
		t.Fatalf("%q (%d)", b, size)
	}
	if ok, _ := s.Has(ctx, d); !ok {
		t.Fatal("Has")
	}
	if objects.Key(d) != "snapshots/"+strings.Repeat("1f", 32)+".tar.gz" {
		t.Fatal(objects.Key(d))
	}
}
