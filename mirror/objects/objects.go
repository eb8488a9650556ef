// Package objects keeps the team mirror's snapshot archives in an
// S3-compatible object store (SPEC §15), one object per tree digest,
// written once and never replaced: the name says what the content must be,
// so an object is as good as the digest check a client makes of it.
package objects

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"reasonix.io/plugind/secrets"
)

// Config says where the store is. Credentials come from the environment
// (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), never from flags; none means
// anonymous requests.
type Config struct {
	Endpoint  string // http(s)://HOST[:PORT]
	Bucket    string
	AccessKey string
	SecretKey string
	// SessionToken is AWS_SESSION_TOKEN, for temporary credentials.
	SessionToken string
	Region       string // default us-east-1
	Transport    http.RoundTripper
}

// Store is one bucket.
type Store struct {
	c      *minio.Client
	bucket string
	where  string // endpoint and bucket, for messages
}

// Open connects to the bucket, creating it when it does not exist yet.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--s3-endpoint %q: want http(s)://HOST[:PORT] with no path, credentials or query (credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)", secrets.Mask(cfg.Endpoint))
	}
	if err := checkBucket(cfg.Bucket); err != nil {
		return nil, err
	}
	region := cmp.Or(cfg.Region, "us-east-1")
	creds := credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken)
	if cfg.AccessKey == "" {
		creds = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds: creds, Secure: u.Scheme == "https", Region: region, Transport: cfg.Transport,
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, fmt.Errorf("object store %s: %w", u.Host, err)
	}
	s := &Store{c: c, bucket: cfg.Bucket, where: u.Scheme + "://" + u.Host + "/" + cfg.Bucket}
	ok, err := c.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("object store %s: %w", s.where, err)
	}
	if !ok {
		if err := c.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: region}); err != nil {
			// Another replica may have made it at the same moment.
			if exists, err2 := c.BucketExists(ctx, cfg.Bucket); err2 != nil || !exists {
				return nil, fmt.Errorf("object store %s: create the bucket: %w", s.where, err)
			}
		}
	}
	return s, nil
}

// checkBucket applies S3's bucket naming rules, so a typo is a clear error
// at start rather than a signature failure later.
func checkBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("--s3-bucket %q: a bucket name has 3 to 63 characters", b)
	}
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (c == '-' || c == '.') && i > 0 && i < len(b)-1
		if !ok {
			return fmt.Errorf("--s3-bucket %q: use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit", b)
		}
	}
	return nil
}

// Where names the bucket for logs ("http://127.0.0.1:8333/snapshots").
func (s *Store) Where() string { return s.where }

// Key is the object name of a tree digest's archive.
func Key(digest string) string {
	return "snapshots/" + strings.TrimPrefix(digest, "sha256:") + ".tar.gz"
}

// Ping checks that the bucket answers.
func (s *Store) Ping(ctx context.Context) error {
	ok, err := s.c.BucketExists(ctx, s.bucket)
	if err != nil {
		return storeErr("object store %s: %w", s.where, err)
	}
	if !ok {
		return storeErr("object store %s: the bucket does not exist", s.where)
	}
	return nil
}

// Has reports whether the archive of digest is stored.
func (s *Store) Has(ctx context.Context, digest string) (bool, error) {
	_, err := s.c.StatObject(ctx, s.bucket, Key(digest), minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return false, nil
	}
	return false, storeErr("object store %s: stat %s: %w", s.where, Key(digest), err)
}

// Put uploads the archive of digest from r (size bytes) unless it is
// already there: objects are immutable, and the first upload stands.
func (s *Store) Put(ctx context.Context, digest string, r io.Reader, size int64) error {
	if ok, err := s.Has(ctx, digest); err != nil || ok {
		return err
	}
	_, err := s.c.PutObject(ctx, s.bucket, Key(digest), r, size, minio.PutObjectOptions{
		ContentType: "application/gzip",
		// Small archives go up in one request: no multipart bookkeeping.
		DisableMultipart: size < 64<<20,
	})
	if err != nil {
		return storeErr("object store %s: upload %s: %w", s.where, Key(digest), err)
	}
	return nil
}

// ErrStore marks every failure of the object store (errors.Is), so a
// caller tells it from everything else: the mirror answers those without
// their details (endpoint, bucket, the store's own words), which belong in
// its log.
var ErrStore = errors.New("the mirror's object store failed")

// storeError is a failed store operation; it matches ErrStore.
type storeError struct{ err error }

func (e *storeError) Error() string   { return e.err.Error() }
func (e *storeError) Unwrap() []error { return []error{e.err, ErrStore} }

func storeErr(format string, args ...any) error {
	return &storeError{fmt.Errorf(format, args...)}
}

// ErrMissing: the object is not in the store.
var ErrMissing = errors.New("the archive is missing from the object store")

// Get opens the archive of digest.
func (s *Store) Get(ctx context.Context, digest string) (io.ReadCloser, int64, error) {
	obj, err := s.c.GetObject(ctx, s.bucket, Key(digest), minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, storeErr("object store %s: get %s: %w", s.where, Key(digest), err)
	}
	// GetObject is lazy; Stat makes the request, so a missing object is an
	// error here rather than in the middle of a response.
	info, err := obj.Stat()
	if err != nil {
		_ = obj.Close()
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil, 0, storeErr("object store %s: %s: %w", s.where, Key(digest), ErrMissing)
		}
		return nil, 0, storeErr("object store %s: get %s: %w", s.where, Key(digest), err)
	}
	return &reader{obj, s.where}, info.Size, nil
}

// reader marks the errors of reading an archive as the store's.
type reader struct {
	*minio.Object
	where string
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.Object.Read(p)
	if err != nil && err != io.EOF {
		err = storeErr("object store %s: read: %w", r.where, err)
	}
	return n, err
}

// Remove deletes the archive of digest: only for one found altered, so the
// next request stores it again.
func (s *Store) Remove(ctx context.Context, digest string) error {
	if err := s.c.RemoveObject(ctx, s.bucket, Key(digest), minio.RemoveObjectOptions{}); err != nil {
		return storeErr("object store %s: remove %s: %w", s.where, Key(digest), err)
	}
	return nil
}
