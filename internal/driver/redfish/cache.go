package redfish

import (
	"container/list"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
)

// cacheKey identifies a BMC login: the password is kept only as a keyed
// hash, so a changed password opens a new session (as upstream's
// SessionCache does with its password hash).
type cacheKey struct {
	address, rootPrefix, username, verify, auth, tlsMin string
	passwordMAC                                         string
}

// connCache keeps the most recently used connections, at most size of them
// ([redfish]connection_cache_size; 0 disables caching).
type connCache struct {
	mu      sync.Mutex
	size    int
	macKey  []byte
	entries map[cacheKey]*list.Element
	lru     *list.List // front = most recent; values are *cacheEntry
	log     *slog.Logger
}

type cacheEntry struct {
	key  cacheKey
	conn *conn
}

func newConnCache(size int, log *slog.Logger) *connCache {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(fmt.Sprintf("redfish: random key: %v", err))
	}
	return &connCache{size: size, macKey: key, entries: map[cacheKey]*list.Element{}, lru: list.New(), log: log}
}

func (cc *connCache) key(info DriverInfo) cacheKey {
	m := hmac.New(sha256.New, cc.macKey)
	m.Write([]byte(info.Address))
	m.Write([]byte{0})
	m.Write([]byte(info.Password))
	return cacheKey{
		address: info.Address, rootPrefix: info.RootPrefix, username: info.Username, verify: info.VerifyCA,
		auth: info.AuthType, tlsMin: info.TLSMinimum, passwordMAC: hex.EncodeToString(m.Sum(nil)),
	}
}

// get returns the cached connection for info or a new one.
func (cc *connCache) get(info DriverInfo, opts *Options) (*conn, cacheKey, error) {
	k := cc.key(info)
	cc.mu.Lock()
	if el, ok := cc.entries[k]; ok {
		cc.lru.MoveToFront(el)
		c := el.Value.(*cacheEntry).conn
		cc.mu.Unlock()
		return c, k, nil
	}
	cc.mu.Unlock()
	cc.log.Debug("no cached redfish connection, opening one", "address", info.SafeAddress())
	c, err := newConn(info, opts, cc.log)
	if err != nil {
		return nil, k, err
	}
	if cc.size <= 0 {
		return c, k, nil
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if el, ok := cc.entries[k]; ok {
		// Another operation opened one meanwhile: share it.
		cc.lru.MoveToFront(el)
		return el.Value.(*cacheEntry).conn, k, nil
	}
	cc.entries[k] = cc.lru.PushFront(&cacheEntry{key: k, conn: c})
	for cc.lru.Len() > cc.size {
		oldest := cc.lru.Back()
		e := oldest.Value.(*cacheEntry)
		cc.lru.Remove(oldest)
		delete(cc.entries, e.key)
		go retire(e.conn)
	}
	return c, k, nil
}

// drop forgets a connection that failed, so the next attempt starts afresh.
func (cc *connCache) drop(k cacheKey) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if el, ok := cc.entries[k]; ok {
		cc.lru.Remove(el)
		delete(cc.entries, k)
	}
}

// len reports how many connections are cached.
func (cc *connCache) len() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.lru.Len()
}

// retire logs an evicted connection out of its BMC.
func retire(c *conn) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	c.logout(ctx)
	c.closeIdle()
}
