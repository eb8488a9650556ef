package jsondoc

import (
	"fmt"
	"strings"
)

// Join is the JSON path of member key of the value at path at: "a.b", or
// a["k.x"] for a key that would read as path syntax (only '"' and '\\'
// escaped: the key stays as written).
func Join(at, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\"") {
		return at + `["` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(key) + `"]`
	}
	if at == "" {
		return key
	}
	return at + "." + key
}

// Index is the JSON path of item i of the array at path at.
func Index(at string, i int) string {
	return fmt.Sprintf("%s[%d]", at, i)
}
