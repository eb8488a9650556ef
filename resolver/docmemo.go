package resolver

import (
	"crypto/sha256"
	"sync"

	"reasonix.io/plugind/marketplace"
)

// docMemo keeps the last few marketplace documents parsed, by their bytes,
// format and options: parsing is a pure function of those, and the daemon
// re-plans the same marketplace over and over (parsing a thousand entries
// was a fifth of a warm plan). A parsed document is shared between plans
// and must only be read.
type docMemo struct {
	mu   sync.Mutex
	docs []parsedDoc // most recent last
}

type parsedDoc struct {
	key [32]byte
	m   *marketplace.Marketplace
}

// maxParsedDocs is how many documents docMemo keeps: a daemon serves a
// handful of marketplaces.
const maxParsedDocs = 4

func docKey(data []byte, doc marketplace.Document, opts marketplace.Options) [32]byte {
	h := sha256.New()
	h.Write([]byte(doc.Path))
	if opts.AllowUnpinned {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
	h.Write(data)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// parse returns parse(data, opts), the parse of a document of kind doc,
// remembered.
func (d *docMemo) parse(data []byte, doc marketplace.Document, opts marketplace.Options, parse func([]byte, marketplace.Options) (*marketplace.Marketplace, error)) (*marketplace.Marketplace, error) {
	key := docKey(data, doc, opts)
	d.mu.Lock()
	for i, p := range d.docs {
		if p.key == key {
			d.docs = append(append(d.docs[:i:i], d.docs[i+1:]...), p)
			d.mu.Unlock()
			return p.m, nil
		}
	}
	d.mu.Unlock()
	m, err := parse(data, opts)
	if err != nil {
		return nil, err // not remembered: errors are cheap to find again
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.docs) >= maxParsedDocs {
		d.docs = append(d.docs[:0:0], d.docs[1:]...)
	}
	d.docs = append(d.docs, parsedDoc{key, m})
	return m, nil
}
