package resolver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/schollz/progressbar/v3"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/source"
	"reasonix.io/plugind/tarball"
)

// fetchTarball is the no-git path: the REST archive link for the commit,
// downloaded with retries and extracted as it streams in. The archive's
// root folder and pax header must name the commit asked for.
func (s *Sources) fetchTarball(ctx context.Context, r *source.Remote, sha, dest string) error {
	// GET the REST archive link and follow its redirect to the download
	// host in one go (net/http drops the Authorization header when the
	// redirect leaves the API host).
	link, err := s.gh.BaseURL.Parse(fmt.Sprintf("repos/%s/%s/tarball/%s", r.Owner, r.Repo, sha))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, link.String(), nil)
	if err != nil {
		return err
	}
	if s.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.cfg.Token)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return plugind.Errorf(plugind.CodeSourceUnreadable, "download archive of %s@%s from %s: %w", remoteKey(r), short(sha), link.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return plugind.Errorf(plugind.CodeSourceUnreadable, "download archive of %s@%s: %s answered %s", remoteKey(r), short(sha), resp.Request.URL.Host, resp.Status)
	}
	host := resp.Request.URL.Host
	body := newStallReader(resp.Body, host, s.cfg.Timeout, cancel)
	defer body.Close()
	src := fmt.Sprintf("%s@%s", r.FullName(), short(sha))
	opts := tarball.Options{Budget: s.cfg.Budget, StripRoot: true, ExpectCommit: sha}
	if s.cfg.Progress != nil && !bulkProgress(ctx) {
		bar := progressbar.NewOptions64(resp.ContentLength,
			progressbar.OptionSetWriter(s.cfg.Progress),
			progressbar.OptionSetDescription("download "+src),
			progressbar.OptionShowBytes(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond))
		defer bar.Finish()
		if _, err := tarball.ExtractTarGz(ctx, io.TeeReader(body, bar), dest, opts); err != nil {
			return fmt.Errorf("archive of %s: %w", src, err)
		}
		return nil
	}
	if _, err := tarball.ExtractTarGz(ctx, body, dest, opts); err != nil {
		return fmt.Errorf("archive of %s: %w", src, err)
	}
	return nil
}
