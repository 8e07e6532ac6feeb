//go:build !unix

package sim

import "os"

// ownedByMe: without Unix owners, the directory's permissions decide.
func ownedByMe(os.FileInfo) bool { return true }
