package host

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/mod/sumdb/tlog"

	"reasonix.io/plugind/checksumlog"
)

// verifiedRecords remembers, in one append-only file per log
// ($REASONIX_HOME/cache/checksumlog/NAME/verified), every record this home
// verified, with its proof: a warm re-plan of a 300-entry marketplace then
// reads one file instead of 300 cached lookups, and asks the log nothing.
// A line is
//
//	LOGPATH SHA sha256:HEX GITTREE|- ID TREESIZE TREEHASH
//
// the record's own line and the signed tree head it was proven in. Each is
// appended in one write (O_APPEND), so processes sharing the home never
// interleave; a line that does not parse is skipped (it is derived data).
type verifiedRecords struct {
	path string
	once sync.Once
	mu   sync.Mutex
	recs map[string]LogRecord // by LOGPATH@SHA
}

func verifiedKey(logPath, commit string) string { return logPath + "@" + commit }

func (v *verifiedRecords) load() {
	v.recs = map[string]LogRecord{}
	data, err := os.ReadFile(v.path)
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if r, err := parseVerified(sc.Text()); err == nil {
			v.recs[verifiedKey(checksumlog.LogPath(r.Place, r.Path), r.Commit)] = r
		}
	}
}

func parseVerified(line string) (LogRecord, error) {
	f := strings.Fields(line)
	if len(f) != 7 {
		return LogRecord{}, fmt.Errorf("checksum log: malformed verified record %q", line)
	}
	place, path, err := checksumlog.SplitLogPath(f[0])
	if err != nil {
		return LogRecord{}, err
	}
	r, err := checksumlog.ParseLine(strings.Join(f[:4], " "), place, path)
	if err != nil {
		return LogRecord{}, err
	}
	id, err1 := strconv.ParseInt(f[4], 10, 64)
	n, err2 := strconv.ParseInt(f[5], 10, 64)
	h, err3 := tlog.ParseHash(f[6])
	if err := errors.Join(err1, err2, err3); err != nil || id < 0 || id >= n {
		return LogRecord{}, fmt.Errorf("checksum log: malformed proof in %q", line)
	}
	return LogRecord{Record: r, ID: id, TreeSize: n, TreeHash: h, Cached: true}, nil
}

// get returns the record of logPath at commit, when this home verified it.
func (v *verifiedRecords) get(logPath, commit string) (*LogRecord, bool) {
	v.once.Do(v.load)
	v.mu.Lock()
	defer v.mu.Unlock()
	r, ok := v.recs[verifiedKey(logPath, commit)]
	return &r, ok
}

// add remembers recs, in one write (a scan of the log verifies hundreds
// at once). A failure costs the next process a cached lookup.
func (v *verifiedRecords) add(recs ...*LogRecord) error {
	v.once.Do(v.load)
	var lines strings.Builder
	v.mu.Lock()
	for _, r := range recs {
		key := verifiedKey(checksumlog.LogPath(r.Place, r.Path), r.Commit)
		if _, had := v.recs[key]; had {
			continue
		}
		c := *r
		c.Cached = true
		v.recs[key] = c
		lines.WriteString(strings.TrimSuffix(r.Line(), "\n") + fmt.Sprintf(" %d %d %s\n", r.ID, r.TreeSize, r.TreeHash))
	}
	v.mu.Unlock()
	if lines.Len() == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(v.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(v.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(lines.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
