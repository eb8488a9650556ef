package jsonout

import (
	"runtime"

	"golang.org/x/sync/errgroup"
)

// Shares encodes n elements a share per CPU, side by side (a bulk plan's
// thousand actions took 16 ms on one, issue 24): encode(lo, hi) returns
// elements lo to hi as a JSON array. Every share holds an element.
func Shares(n int, encode func(lo, hi int) ([]byte, error)) ([][]byte, error) {
	shares := make([][]byte, min(runtime.GOMAXPROCS(0), n))
	var g errgroup.Group
	for i := range shares {
		g.Go(func() (err error) {
			shares[i], err = encode(i*n/len(shares), (i+1)*n/len(shares))
			return err
		})
	}
	return shares, g.Wait()
}

// Splice returns the pieces that, written in order, are doc with the
// shares' elements in its empty array whose closing bracket is doc[at]:
// doc's bytes before, the shares' elements between sep, doc's bytes
// after. A share is the array open, its elements, close ("[" and "]",
// or their laid-out forms, "[\n" and "\n  ]" inside an object).
func Splice(doc []byte, at int, shares [][]byte, open, sep, close string) [][]byte {
	pieces := [][]byte{doc[:at], []byte(open[1:])}
	for i, sh := range shares {
		if i > 0 {
			pieces = append(pieces, []byte(sep))
		}
		pieces = append(pieces, sh[len(open):len(sh)-len(close)])
	}
	return append(pieces, []byte(close[:len(close)-1]), doc[at:])
}
