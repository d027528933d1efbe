//go:build !linux

package main

// describeStorage knows only Linux's statfs and sysfs; elsewhere it names
// the directory.
func describeStorage(dir string) storageFacts {
	return storageFacts{Dir: dir, Note: "storage facts are read from Linux's statfs and sysfs only"}
}
