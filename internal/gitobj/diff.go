package gitobj

import "slices"

// Difference is the first entry where two listings of a folder differ:
// Ours or Theirs is nil when only the other has the name.
type Difference struct {
	Name         string
	Ours, Theirs *Entry
}

// FirstDifference walks two listings of one folder in name order (so a
// name that is a folder on one side and a file on the other meets itself)
// and returns the first name whose entry differs (missing, another mode,
// other content); ok is false when they are the same.
func FirstDifference(ours, theirs []Entry) (d Difference, ok bool) {
	byName := func(a, b Entry) int { return compareNames(a.Name, b.Name) }
	ours, theirs = slices.SortedFunc(slices.Values(ours), byName), slices.SortedFunc(slices.Values(theirs), byName)
	i, j := 0, 0
	for i < len(ours) || j < len(theirs) {
		var c int
		switch {
		case i == len(ours):
			c = 1
		case j == len(theirs):
			c = -1
		default:
			c = compareNames(ours[i].Name, theirs[j].Name)
		}
		switch {
		case c < 0:
			return Difference{Name: ours[i].Name, Ours: &ours[i]}, true
		case c > 0:
			return Difference{Name: theirs[j].Name, Theirs: &theirs[j]}, true
		case ours[i] != theirs[j]:
			return Difference{Name: ours[i].Name, Ours: &ours[i], Theirs: &theirs[j]}, true
		}
		i, j = i+1, j+1
	}
	return Difference{}, false
}

// compareNames orders names by their bytes alone.
func compareNames(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
