package image

import (
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/swift"
)

func TestSwiftTempURL(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := &SwiftTempURLs{EndpointURL: "https://swift.example/v1/AUTH_p1/", APIVersion: "v1", Account: "AUTH_acct", AccountPrefix: "AUTH",
		Container: "glance", Key: "k", Duration: 600 * time.Second, Now: func() time.Time { return now }}
	info := &Info{ID: "6d9c51a0-52b6-4a8e-9d43-4a1f4e0e8f11"}
	u, err := s.TempURL(info)
	if err != nil {
		t.Fatal(err)
	}
	// The account path of the endpoint is dropped; the expiry is now + duration.
	if !strings.HasPrefix(u, "https://swift.example/v1/AUTH_acct/glance/"+info.ID+"?temp_url_sig=") || !strings.HasSuffix(u, "&temp_url_expires=1800000600") {
		t.Fatalf("url %s", u)
	}
	if sig := swift.TempURLSignature("k", "GET", "/v1/AUTH_acct/glance/"+info.ID, 1800000600); !strings.Contains(u, "temp_url_sig="+sig+"&") {
		t.Fatalf("url %s not signed with the key", u)
	}
	for seed, want := range map[int]string{0: "glance", 3: "glance_6d9", 9: "glance_6d9c51a0-5", 32: "glance_6d9c51a0-52b6-4a8e-9d43-4a1f4e0e8f11"} {
		s.MultipleContainersSeed = seed
		if got := s.container(info.ID); got != want {
			t.Errorf("seed %d: container %s, want %s", seed, got, want)
		}
	}
	s.MultipleContainersSeed = 33
	_, err = s.TempURL(info)
	wantClass(t, err, "InvalidParameterValue", "An integer value between 0 and 32 is required for swift_store_multiple_containers_seed.")
	s.MultipleContainersSeed = 0

	// With the cache, the same URL is answered until it would expire
	// before the expected download start.
	s.CacheEnabled, s.ExpectedDownloadStartDelay = true, 100*time.Second
	first, _ := s.TempURL(info)
	now = now.Add(400 * time.Second)
	if again, _ := s.TempURL(info); again != first {
		t.Fatal("cached URL not reused")
	}
	now = now.Add(150 * time.Second)
	if fresh, _ := s.TempURL(info); fresh == first {
		t.Fatal("URL expiring before the download start was reused")
	}
	s.Duration = 10 * time.Second
	_, err = s.TempURL(info)
	wantClass(t, err, "InvalidParameterValue", "")
	s.Duration = time.Hour
	_, err = s.TempURL(&Info{ID: "nope"})
	wantClass(t, err, "ImageUnacceptable", "The given image info does not have a valid image id: nope")
}
