package git

import (
	"encoding/binary"
	"fmt"
	"math"

	"reasonix.io/plugind"
)

// packLimits bounds what one pack may cost, whoever crafted it: the bytes
// downloaded, the objects indexed (each keeps a record in memory for as
// long as the pack is read), and the bytes inflated and patched to hash and
// read them (zlib inflates a thousandfold, and a chain of deltas can copy
// the same large base again and again, so neither the download size nor
// the object count bounds the CPU a pack takes).
type packLimits struct {
	// what names the fetch in errors ("a fetch of one commit").
	what string
	// bytes bounds the pack as downloaded.
	bytes int64
	// objects bounds the count the pack's header declares, checked before
	// anything is inflated.
	objects int64
	// maxObject is the largest object hashed; larger ones (and deltas on
	// them) are read past, never hashed (no budget could take them).
	maxObject int64
	// work bounds the bytes inflated and produced by delta patching while
	// the pack is indexed and read, recomputations included; workWhy says
	// where the number comes from.
	work    int64
	workWhy string
}

const (
	// objectsPerFile sizes the object bound of a depth-1 fetch from the
	// file budget: a tree within it holds at most MaxFiles blobs and about
	// as many trees, and the same commit of a monorepo whose plugin folder
	// fits may hold several times that beside it.
	objectsPerFile = 10
	// minPackObjects keeps a tiny test budget from refusing a repository
	// for its object count before its files are counted.
	minPackObjects = 1000
	// maxHistoryObjects bounds a history fetch (every branch and tag):
	// commits only where the server filters, which covers all but the
	// largest repositories, at most 68 bytes of index each (17 MB), within
	// indexMemory (TestPackObjectRecordSize).
	maxHistoryObjects = 250_000
	// workPerBudgetByte sizes the work bound of a content fetch: the
	// budget's bytes of content, what lies beside them in the same commit
	// (a 1 GiB asset beside a plugin is read past, inflated all the same)
	// and delta resolution, with room.
	workPerBudgetByte = 8
	// maxHistoryWork bounds a history fetch's work: four times its pack
	// bound, where commits inflate to about twice their compressed size.
	maxHistoryWork = 4 * maxHistoryPack
)

// contentLimits bounds a depth-1 fetch of one commit under budget b.
func contentLimits(b plugind.Budget) packLimits {
	b = b.OrDefault()
	return packLimits{
		what:      "a fetch of one commit",
		bytes:     packLimit(b),
		objects:   max(objectsPerFile*int64(b.MaxFiles), minPackObjects),
		maxObject: min(b.MaxBytes, maxLength-1),
		work:      workPerBudgetByte * b.MaxBytes,
		workWhy:   fmt.Sprintf("%d times the size budget", workPerBudgetByte),
	}
}

// historyContentLimits bounds the tips-only fallback of a content fetch:
// every branch and tag, whole, under budget b.
func historyContentLimits(b plugind.Budget) packLimits {
	l := contentLimits(b)
	l.what = "a fetch of every branch and tag"
	l.objects = max(l.objects, maxHistoryObjects)
	return l
}

// historyLimits bounds a reachability check's fetch of every branch and
// tag's history (bytes: its pack bound, maxHistoryPack or maxProbePack).
func historyLimits(bytes int64) packLimits {
	return packLimits{
		what:      "a history fetch",
		bytes:     bytes,
		objects:   maxHistoryObjects,
		maxObject: smallObject,
		work:      maxHistoryWork,
		workWhy:   fmt.Sprintf("%d times the history pack bound", maxHistoryWork/maxHistoryPack),
	}
}

// checkCount refuses a pack whose header declares more objects than the
// bound, before any of them is read.
func (l packLimits) checkCount(count uint32) error {
	if int64(count) > min(l.objects, math.MaxInt32) {
		return plugind.Errorf(plugind.CodeBudgetExceeded, "the repository's pack holds %d objects, more than the %d %s may index", count, l.objects, l.what)
	}
	return nil
}

// packHeaderSize is the pack header: "PACK", a version, an object count.
const packHeaderSize = 12

// parsePackHeader reads the object count of a pack header.
func parsePackHeader(h []byte) (uint32, error) {
	if len(h) < packHeaderSize || string(h[:4]) != "PACK" {
		return 0, corruptPack(fmt.Errorf("no pack signature"))
	}
	if v := binary.BigEndian.Uint32(h[4:8]); v != 2 && v != 3 {
		return 0, corruptPack(fmt.Errorf("pack version %d", v))
	}
	return binary.BigEndian.Uint32(h[8:12]), nil
}

// workMeter charges the bytes an index inflates and patches against the
// work bound of limits.
type workMeter struct {
	limit     int64
	what, why string
	done      int64
}

func (l packLimits) meter() workMeter { return workMeter{limit: l.work, what: l.what, why: l.workWhy} }

// charge counts n more bytes of work, refusing the pack once the bound is
// passed.
func (m *workMeter) charge(n int64) error {
	m.done += n
	if m.done > m.limit {
		return plugind.Errorf(plugind.CodeBudgetExceeded, "the repository's pack takes more than %s of inflating and delta patching to read, the bound of %s (%s)", plugind.HumanBytes(m.limit), m.what, m.why)
	}
	return nil
}
