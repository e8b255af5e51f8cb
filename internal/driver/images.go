package driver

import "context"

// ImagePublisher is implemented by the management interfaces of hardware
// types that can publish an image where their BMC fetches it (upstream's
// ImageHandler: http_root/<subdir> of the conductor's HTTP server, or
// Swift under a temporary URL). The conductor publishes the images of
// attach_virtual_media with it, and withdraws them on detach and when the
// node is deleted.
type ImagePublisher interface {
	// PublishImage publishes the file at path as name and answers the URL
	// to give the BMC.
	PublishImage(ctx context.Context, task *Task, path, name string) (string, error)
	// UnpublishImage withdraws name; one never published is no error.
	UnpublishImage(ctx context.Context, task *Task, name string) error
}

// PublishedImagesRemover is implemented by interfaces that publish images
// for a node under names of their own (a boot ISO, a configuration or
// config drive image): the conductor calls it when the node is deleted,
// so that nothing published for the node outlives it.
type PublishedImagesRemover interface {
	RemovePublishedImages(ctx context.Context, task *Task) error
}

// ImageCacheKeeper is implemented by interfaces that keep an image cache
// of their own (instance images, PXE kernels and ramdisks, boot ISOs):
// the conductor's _clean_up_caches periodic ([conductor]/
// cache_clean_up_interval) asks each to drop its expired entries and trim
// itself to its size, as upstream's image_cache.clean_up_all. A cache
// never used (no directory yet) is left alone.
type ImageCacheKeeper interface {
	CleanUpImageCaches(ctx context.Context)
}

// InstanceImagesDestroyer is implemented by deploy interfaces that cache
// a node's instance image: with [conductor]/
// clear_image_cache_on_deploy_failure the conductor removes them when a
// deployment fails without a clean-up (upstream's destroy_images).
type InstanceImagesDestroyer interface {
	DestroyInstanceImages(ctx context.Context, task *Task)
}
