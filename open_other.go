//go:build !unix

package plugind

// openNonblock is nothing where there are no named pipes to wait on.
const openNonblock = 0
