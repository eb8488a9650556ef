// Package mirrortest gives tests and benchmarks of the team mirror real
// engines: a fresh PostgreSQL database and a fresh S3 bucket per test, on
// the servers REASONIX_TEST_POSTGRES (an admin DSN) and REASONIX_TEST_S3 (an
// S3 endpoint URL) name — `eval "$(.ci/engines start)"` starts both — and
// in-process mirror replicas over them. A test that needs an engine is
// skipped, saying how to start it, when its variable is unset.
package mirrortest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"reasonix.io/plugind/mirror"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/objects"
	"reasonix.io/plugind/mirror/policy"
)

// Environment variables naming the engines.
const (
	EnvPostgres = "REASONIX_TEST_POSTGRES"
	EnvS3       = "REASONIX_TEST_S3"
)

const howToStart = `start them with: eval "$(.ci/engines start)" (PostgreSQL from Debian's package, SeaweedFS built from its Go module; .ci/run does this)`

// Skip skips t unless both engines are configured.
func Skip(t testing.TB) {
	t.Helper()
	for _, v := range []string{EnvPostgres, EnvS3} {
		if os.Getenv(v) == "" {
			t.Skipf("%s is unset: this test needs real PostgreSQL and S3 engines; %s", v, howToStart)
		}
	}
}

func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// NewDatabase creates an empty database on the admin DSN's server and
// returns its DSN and a function that drops it.
func NewDatabase(ctx context.Context, admin string) (string, func() error, error) {
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("%s must be a postgres:// URL", EnvPostgres)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s: %w", u.Host, err)
	}
	defer conn.Close(ctx)
	name := randomName("reasonix_t_")
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u.Path = "/" + name
	drop := func() error {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(dctx, admin)
		if err != nil {
			return err
		}
		defer c.Close(dctx)
		_, err = c.Exec(dctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		return err
	}
	return u.String(), drop, nil
}

// fresh skips t unless env names an engine's server, then makes a fresh
// resource on it with create, removed when t ends: it returns the server
// and the resource's name.
func fresh(t testing.TB, env, engine, remove string, create func(server string) (string, func() error, error)) (string, string) {
	t.Helper()
	server := os.Getenv(env)
	if server == "" {
		t.Skipf("%s is unset: this test needs a real %s; %s", env, engine, howToStart)
	}
	name, undo, err := create(server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := undo(); err != nil {
			t.Logf("%s: %v", remove, err)
		}
	})
	return server, name
}

// Postgres returns the DSN of a fresh database, dropped when t ends.
func Postgres(t testing.TB) string {
	t.Helper()
	_, dsn := fresh(t, EnvPostgres, "PostgreSQL", "drop test database", func(admin string) (string, func() error, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return NewDatabase(ctx, admin)
	})
	return dsn
}

// RawS3 is a plain S3 client of the test engine, for what the mirror never
// does (altering an object, removing a bucket).
func RawS3(endpoint string) (*minio.Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s %q is not a URL", EnvS3, endpoint)
	}
	return minio.New(u.Host, &minio.Options{
		Creds:  credentials.NewStatic("", "", "", credentials.SignatureAnonymous),
		Secure: u.Scheme == "https", BucketLookup: minio.BucketLookupPath, Region: "us-east-1",
	})
}

// NewBucket names a bucket that does not exist yet (objects.Open creates
// it) and returns a function that empties and removes it.
func NewBucket(endpoint string) (string, func() error, error) {
	c, err := RawS3(endpoint)
	if err != nil {
		return "", nil, err
	}
	name := strings.ReplaceAll(randomName("reasonix-t-"), "_", "-")
	remove := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if ok, err := c.BucketExists(ctx, name); err != nil || !ok {
			return err
		}
		for o := range c.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true}) {
			if o.Err != nil {
				return o.Err
			}
			if err := c.RemoveObject(ctx, name, o.Key, minio.RemoveObjectOptions{}); err != nil {
				return err
			}
		}
		return c.RemoveBucket(ctx, name)
	}
	return name, remove, nil
}

// S3 returns the endpoint and a fresh bucket name, the bucket removed when
// t ends.
func S3(t testing.TB) (endpoint, bucket string) {
	t.Helper()
	return fresh(t, EnvS3, "S3-compatible store", "remove test bucket", NewBucket)
}

// Engines are one database and one bucket, opened.
type Engines struct {
	DSN      string
	Endpoint string
	Bucket   string
	DB       *meta.DB
	Objects  *objects.Store
}

// Open gives t a fresh database and bucket, opened (schema migrated, bucket
// created), closed when t ends.
func Open(t testing.TB) *Engines {
	t.Helper()
	Skip(t)
	e := &Engines{DSN: Postgres(t)}
	e.Endpoint, e.Bucket = S3(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	if e.DB, err = meta.Open(ctx, e.DSN); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.DB.Close)
	if e.Objects, err = objects.Open(ctx, objects.Config{Endpoint: e.Endpoint, Bucket: e.Bucket}); err != nil {
		t.Fatal(err)
	}
	return e
}

// Token creates a client token, limited to scopes (RULEs; none: anything
// the policy allows).
func (e *Engines) Token(t testing.TB, name string, scopes ...string) string {
	t.Helper()
	sc, err := policy.ParseScopes(scopes)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.DB.CreateToken(context.Background(), name, sc)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Replica is an in-process mirror replica on loopback.
type Replica struct {
	URL    string
	Server *mirror.Server
	stop   context.CancelFunc
	done   chan error
}

// Options configure a replica: Upstream is required, and Start fills in
// DB and Objects.
type Options = mirror.Config

// StartReplica runs a replica over e until Stop (or the end of t).
func (e *Engines) StartReplica(t testing.TB, o Options) *Replica {
	t.Helper()
	r, err := e.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	return r
}

// Start runs a replica over e (for benchmarks without a testing.TB).
func (e *Engines) Start(o Options) (*Replica, error) {
	o.DB, o.Objects = e.DB, e.Objects
	srv, err := mirror.New(o)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Replica{URL: "http://" + ln.Addr().String(), Server: srv, stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- srv.Serve(ctx, ln, 5*time.Second) }()
	return r, nil
}

// Stop shuts the replica down gracefully.
func (r *Replica) Stop() error {
	if r.stop == nil {
		return nil
	}
	r.stop()
	r.stop = nil
	return <-r.done // Serve returns nil once it has shut down
}
