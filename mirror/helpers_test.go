package mirror_test

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"sort"

	"github.com/minio/minio-go/v7"

	"reasonix.io/plugind/source"
)

func minioRemove() minio.RemoveObjectOptions { return minio.RemoveObjectOptions{} }

// writeTestArchive writes files as a tar.gz the way any tool would.
func writeTestArchive(w io.Writer, files map[string]string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(files[n]))}); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, files[n]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func minioList() minio.ListObjectsOptions { return minio.ListObjectsOptions{Recursive: true} }

// mustSource is source.FromText for a source a test names itself: it
// panics on an error, as regexp.MustCompile does.
func mustSource(text string) source.Source {
	s, err := source.FromText(text)
	if err != nil {
		panic(err)
	}
	return s
}
