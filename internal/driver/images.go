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
