package image

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/errs"
)

// Cache is upstream's ImageCache: master copies of images in one
// directory, handed to nodes as hard links, bounded in size and age.
// Files whose link count is above one are in use by a node and are never
// removed.
type Cache struct {
	MasterDir string
	// Size is the size limit in bytes ([pxe]/image_cache_size is MiB).
	Size int64
	// TTL is the age limit ([pxe]/image_cache_ttl is minutes).
	TTL time.Duration
	// ForceRaw is the default for FetchImage ([DEFAULT]/force_raw_images).
	ForceRaw bool
	// DisableValidation skips the deep inspection (kernels, ramdisks).
	DisableValidation bool
	Fetcher           *Fetcher
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// FreeSpace answers the bytes available to the conductor on the
	// filesystem holding a path; nil asks statfs.
	FreeSpace func(path string) (int64, error)

	// master serialises linking against clean-up (upstream's
	// "master_image" lock).
	master sync.Mutex
	locks  keyedMutex
}

// NewCache creates the master directory.
func NewCache(masterDir string, size int64, ttl time.Duration, forceRaw bool, f *Fetcher) (*Cache, error) {
	if err := os.MkdirAll(masterDir, 0o755); err != nil {
		return nil, fmt.Errorf("image cache %s: %w", masterDir, err)
	}
	return &Cache{MasterDir: masterDir, Size: size, TTL: ttl, ForceRaw: forceRaw, Fetcher: f}, nil
}

// MasterFileName is the cache's name for href: the Glance image id, or a
// UUID5 of the URL; ".converted" marks raw conversions.
func MasterFileName(href string, forceRaw bool) string {
	name := ""
	if IsGlanceImage(href) {
		if id, err := ParseImageID(href); err == nil {
			name = id
		}
	}
	if name == "" {
		name = uuid.NewSHA1(uuid.NameSpaceURL, []byte(href)).String()
	}
	if forceRaw {
		name += ".converted"
	}
	return name
}

// FetchImage puts the image at dest, a hard link to the master copy,
// downloading it once however many nodes ask at the same time. forceRaw
// nil takes the cache's default.
func (c *Cache) FetchImage(ctx context.Context, href, dest string, forceRaw *bool, o FetchOptions) error {
	raw := c.ForceRaw
	if forceRaw != nil {
		raw = *forceRaw
	}
	o.ForceRaw = raw
	o.DisableValidation = o.DisableValidation || c.DisableValidation
	if o.Reclaim == nil {
		o.Reclaim = c.ReclaimSpace
	}
	name := MasterFileName(href, raw)
	master := filepath.Join(c.MasterDir, name)

	unlock := c.locks.lock(name)
	info, err := c.Fetcher.Sources.Show(ctx, href)
	if err != nil {
		unlock()
		return err
	}
	cacheOK, err := c.masterUpToDate(master, href, info)
	if err != nil {
		unlock()
		return err
	}
	destOK, err := destUpToDate(master, dest)
	if err != nil {
		unlock()
		return err
	}
	if cacheOK && destOK {
		unlock()
		return nil
	}
	if cacheOK {
		c.master.Lock()
		err := os.Link(master, dest)
		if err != nil {
			slog.Debug("could not hard link cached image, copying", "image", master, "dest", dest, "error", err)
			err = copyFile(master, dest)
		}
		c.master.Unlock()
		unlock()
		if err != nil {
			return fmt.Errorf("link cached image %s: %w", href, err)
		}
		return nil
	}
	slog.Info("master cache miss, downloading", "image", href)
	err = c.download(ctx, href, master, dest, info, o)
	unlock()
	if err != nil {
		return err
	}
	c.CleanUp(0)
	return nil
}

func (c *Cache) download(ctx context.Context, href, master, dest string, info *Info, o FetchOptions) error {
	tmpDir, err := os.MkdirTemp(c.MasterDir, "tmp")
	if err != nil {
		return fmt.Errorf("image cache: %w", err)
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, filepath.Base(master))
	if err := c.Fetcher.Fetch(ctx, href, tmp, o); err != nil {
		return err
	}
	if info.NoCache {
		if err := os.Link(tmp, dest); err != nil {
			return linkFailed(href, master, dest, err)
		}
		return nil
	}
	// The master appears by link, fully written, under its final name.
	if err := os.Link(tmp, master); err != nil {
		return linkFailed(href, master, dest, err)
	}
	if err := os.Link(master, dest); err != nil {
		return linkFailed(href, master, dest, err)
	}
	return nil
}

func linkFailed(href, src, dst string, err error) error {
	return errs.NewMessage(errs.ClassImageDownloadFailed, fmt.Sprintf("Could not link image %s from %s to %s, error: %s", href, src, dst, errnoText(err)))
}

func errnoText(err error) string {
	if le, ok := err.(*os.LinkError); ok {
		return le.Err.Error()
	}
	return err.Error()
}

// masterUpToDate is upstream's _delete_master_path_if_stale.
func (c *Cache) masterUpToDate(master, href string, info *Info) (bool, error) {
	st, err := os.Stat(master)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("image cache: %w", err)
	}
	if IsGlanceImage(href) {
		// Glance image content never changes under the same id.
		return true, nil
	}
	if info.UpdatedAt.IsZero() {
		slog.Warn("image service could not tell the modification time, refreshing the cached copy", "image", href, "cached", master)
	} else if !info.UpdatedAt.After(st.ModTime()) {
		return true, nil
	}
	if err := os.Remove(master); err != nil {
		return false, fmt.Errorf("image cache: %w", err)
	}
	return false, nil
}

// destUpToDate is upstream's _delete_dest_path_if_stale.
func destUpToDate(master, dest string) (bool, error) {
	dst, err := os.Stat(dest)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("image cache: %w", err)
	}
	mst, err := os.Stat(master)
	if err == nil && os.SameFile(mst, dst) {
		return true, nil
	}
	if err := os.Remove(dest); err != nil {
		return false, fmt.Errorf("image cache: %w", err)
	}
	return false, nil
}

// freeSpace is upstream's _free_disk_space_for: the bytes an
// unprivileged process may still write.
func (c *Cache) freeSpace(path string) (int64, error) {
	if c.FreeSpace != nil {
		return c.FreeSpace(path)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", path, err)
	}
	return int64(st.Bavail) * st.Frsize, nil
}

// ReclaimSpace is upstream's _clean_up_caches for this cache: when dir's
// filesystem has no room for amount bytes and the cache lives on it,
// unused master copies go until it does; InsufficientDiskSpace when even
// that is not enough.
func (c *Cache) ReclaimSpace(dir string, amount int64) error {
	free, err := c.freeSpace(dir)
	if err != nil {
		return err
	}
	if amount < free {
		return nil
	}
	if sameDevice(dir, c.MasterDir) {
		c.CleanUp(amount - free)
		if free, err = c.freeSpace(dir); err != nil {
			return err
		}
		if amount < free {
			return nil
		}
	}
	return errs.New(errs.ClassInsufficientDiskSpace, map[string]any{"path": dir, "required": amount >> 20, "actual": free >> 20})
}

func sameDevice(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false
	}
	da, okA := sa.Sys().(*syscall.Stat_t)
	db, okB := sb.Sys().(*syscall.Stat_t)
	return okA && okB && da.Dev == db.Dev
}

// EnsureSpaceFor is upstream's clean_up_caches as fetch_images runs it:
// room in the cache for the images' sizes, or InstanceDeployFailure.
func (c *Cache) EnsureSpaceFor(ctx context.Context, hrefs ...string) error {
	var total int64
	for _, href := range hrefs {
		info, err := c.Fetcher.Sources.Show(ctx, href)
		if err != nil {
			return err
		}
		total += info.Size
	}
	if err := c.ReclaimSpace(c.MasterDir, total); err != nil {
		if e, ok := errs.As(err); ok && e.Class == errs.ClassInsufficientDiskSpace {
			return errs.New(errs.ClassInstanceDeployFailure, map[string]any{"reason": e.Message})
		}
		return err
	}
	return nil
}

type candidate struct {
	path     string
	lastUsed time.Time
	size     int64
}

// candidates are the master files no node links to, as upstream's
// _find_candidates_for_deletion.
func (c *Cache) candidates() []candidate {
	entries, err := os.ReadDir(c.MasterDir)
	if err != nil {
		slog.Warn("cannot list image cache", "dir", c.MasterDir, "error", err)
		return nil
	}
	var out []candidate
	for _, e := range entries {
		p := filepath.Join(c.MasterDir, e.Name())
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !ok || sys.Nlink > 1 {
			continue
		}
		last := st.ModTime()
		for _, t := range []time.Time{time.Unix(sys.Atim.Unix()), time.Unix(sys.Ctim.Unix())} {
			if t.After(last) {
				last = t
			}
		}
		out = append(out, candidate{path: p, lastUsed: last, size: st.Size()})
	}
	return out
}

// CleanUp removes expired master files, then the least recently used
// ones until the cache fits its size. amount > 0 asks to reclaim that
// many bytes instead; the bytes still missing are returned.
func (c *Cache) CleanUp(amount int64) int64 {
	c.master.Lock()
	defer c.master.Unlock()
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	threshold := now().Add(-c.TTL)
	want := amount > 0
	var survived []candidate
	listing := c.candidates()
	for i, cand := range listing {
		if cand.lastUsed.Before(threshold) {
			if err := os.Remove(cand.path); err != nil {
				slog.Warn("unable to delete file from master image cache", "file", cand.path, "error", err)
				continue
			}
			if want {
				amount -= cand.size
				if amount <= 0 {
					return 0
				}
			}
			continue
		}
		survived = append(survived, listing[i])
	}
	sort.Slice(survived, func(i, j int) bool { return survived[i].lastUsed.Before(survived[j].lastUsed) })
	total := c.totalSize()
	for len(survived) > 0 && (total > c.Size || (want && amount > 0)) {
		cand := survived[0]
		survived = survived[1:]
		if err := os.Remove(cand.path); err != nil {
			slog.Warn("unable to delete file from master image cache", "file", cand.path, "error", err)
			continue
		}
		total -= cand.size
		if want {
			amount -= cand.size
		}
	}
	if total > c.Size {
		slog.Info("image cache still larger than its limit after clean up", "dir", c.MasterDir, "size", total, "limit", c.Size)
	}
	return max(amount, 0)
}

func (c *Cache) totalSize() int64 {
	entries, err := os.ReadDir(c.MasterDir)
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
	}
	return total
}

// keyedMutex is a lock per image, dropped when nobody holds or waits.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedEntry{}
	}
	e := k.locks[key]
	if e == nil {
		e = &keyedEntry{}
		k.locks[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
