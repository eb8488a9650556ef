package mirror_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/checksumlog"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/mirrortest"
)

// logRequests counts the checksum log requests a replica audited, by
// action (every request is audited before it is answered).
func logRequests(t *testing.T, f *fixture) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, row := range f.auditRows(t) {
		if strings.HasPrefix(row.Action, "log.") {
			n[row.Action+" "+row.Outcome]++
		}
	}
	return n
}

// Clients wired as app.Open wires them (REASONIX_MIRROR and
// REASONIX_CHECKSUM_LOG naming one replica) install a bulk marketplace
// with Go's sumdb client checking every plugin against the log the mirror
// serves: each plugin's record is appended once, by the mirror as it
// first serves the folder or by the first machine's lookup (either way
// the mirror fetched and verified the commit itself), and the second
// machine's lookups find them all; the log holds every plugin once, with
// the digest both installed; a warm re-plan of either asks the log
// nothing.
func TestChecksumLogInstallsThroughMirror(t *testing.T) {
	t.Parallel()
	f, key := logFixture(t, mirrortest.Options{})
	const entries, repos = 12, 3
	src, err := bulkmarket.Fleet(f.gh, "bulk", entries, repos)
	if err != nil {
		t.Fatal(err)
	}
	var homes []string
	for i := range 2 {
		home := filepath.Join(t.TempDir(), fmt.Sprintf("home%d", i))
		homes = append(homes, home)
		resp, err := install(t, f, home, f.rep.URL, f.token, f.rep.URL, key.Verifier, src)
		if err != nil || !resp.Applied {
			t.Fatalf("machine %d: %v", i, err)
		}
		got := installed(t, home)
		if len(got) != entries {
			t.Fatalf("machine %d installed %d plugins, want %d", i, len(got), entries)
		}
		for name, digest := range got {
			var r int
			if _, err := fmt.Sscanf(name, "p%03d-", &r); err != nil {
				t.Fatal(err)
			}
			repo := fmt.Sprintf("repo%02d", r)
			_, rec := recordOf(t, f, "github.com/bulk/"+repo, "plugins/"+name, f.gh.Repo("bulk", repo).Head("main"))
			if rec.Digest != digest {
				t.Errorf("machine %d: %s installed as %s, logged as %s", i, name, digest, rec.Digest)
			}
		}
		if n := logRequests(t, f); n["log.lookup hit"]+n["log.lookup appended"] != (i+1)*entries || n["log.lookup hit"] < i*entries {
			t.Errorf("after machine %d: %v; want %d lookups, the second machine's all hits", i, n, (i+1)*entries)
		}
	}
	if n := logSize(t, f.eng.DB); n != entries {
		t.Errorf("the log holds %d records, want %d (one per plugin; the marketplace's own tree is not logged)", n, entries)
	}
	if n := f.gh.RepoCounts("bulk", "repo00").Content(); n != 1 {
		t.Errorf("bulk/repo00 was fetched upstream %d times, want once for snapshots and records alike", n)
	}

	before := logRequests(t, f)
	for i, home := range homes {
		a, err := mirrortest.OpenClient(context.Background(), home, map[string]string{
			"REASONIX_MIRROR": f.rep.URL, "REASONIX_MIRROR_TOKEN": f.token,
			"REASONIX_CHECKSUM_LOG": key.Verifier + " " + f.rep.URL + "/log",
		}, f.gh, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := a.Installer.Install(context.Background(), installer.Request{Source: mustSource(src)}, installer.Approval{DryRun: true})
		a.Close()
		if err != nil || resp == nil {
			t.Fatalf("machine %d's re-plan: %v", i, err)
		}
	}
	if after := logRequests(t, f); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("warm re-plans asked the log: audited %v, before them %v", after, before)
	}
}

// A log whose records say other digests than the content (here appended
// to it directly, before any machine asked): the install is refused as a
// SECURITY ERROR showing both digests and the record's proof, and writes
// nothing; the mirror serves the real content all along.
func TestChecksumLogForgedRecordRefused(t *testing.T) {
	t.Parallel()
	f, key := logFixture(t, mirrortest.Options{})
	src, err := bulkmarket.Fleet(f.gh, "bulk", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	sha := f.gh.Repo("bulk", "repo00").Head("main")
	forged := "sha256:" + strings.Repeat("0", 64)
	for _, p := range []string{"plugins/p000-00", "plugins/p000-01"} {
		r := checksumlog.Record{Place: "github.com/bulk/repo00", Path: p, Commit: sha, Digest: forged}
		if _, _, err := f.eng.DB.AppendLogRecord(context.Background(), checksumlog.LogPath(r.Place, r.Path), sha, []byte(r.Line())); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(t.TempDir(), "home")
	resp, err := install(t, f, home, f.rep.URL, f.token, f.rep.URL, key.Verifier, src)
	refusedWritingNothing(t, "a forged record", home, resp, err, "SECURITY ERROR", "checksum mismatch",
		"checksum log: "+forged, "fetched:      sha256:", "in its signed tree of 2 records", "may be compromised")
	if strings.Contains(err.Error(), "fetched:      "+forged) {
		t.Errorf("the refusal shows the forged digest as fetched:\n%v", err)
	}
	if n := logSize(t, f.eng.DB); n != 2 {
		t.Errorf("the refused install changed the log: %d records", n)
	}
}
