//go:build !race

package peakrss

const raceBuild = false
