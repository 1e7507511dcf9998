package builds

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// HashLen is how many hex digits of a sha256 name a build (Name, Key), as
// drivers/java/build.sh names its jars.
const HashLen = 12

// Hash is the content hash of the file or directory at path, HashLen hex
// digits. A file's is the sha256 of its bytes (sha256sum's, cut). A
// directory's is the sha256 of a listing of its tree in lexical order, each
// entry's slash-separated relative path with its type: a file's sha256 and
// whether it is executable, a symbolic link's target (not followed), a
// directory's name alone. So it is the same on every machine and every
// walk, and changes when a file's content, name or executable bit does, or
// a file or directory comes or goes. Every .git is left out: a commit or a
// fetch changes no file a build reads.
func Hash(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		sum, err := fileSum(path)
		if err != nil {
			return "", err
		}
		return sum[:HashLen], nil
	}
	h := sha256.New()
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(path, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.Name() == ".git" && p != path {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			fmt.Fprintf(h, "d %q\n", rel)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "l %q %q\n", rel, target)
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			x := "-"
			if info.Mode()&0o111 != 0 {
				x = "x"
			}
			sum, err := fileSum(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "f %q %s %s\n", rel, x, sum)
		default:
			fmt.Fprintf(h, "o %q %s\n", rel, t)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:HashLen], nil
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
