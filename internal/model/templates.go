package model

import "time"

// DeployTemplate is a row of deploy_templates with its steps: deploy steps
// applied when a node's instance asks for the trait that is the name.
type DeployTemplate struct {
	ID        int64      `json:"id"`
	UUID      string     `json:"uuid"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// Name is the trait that selects the template, unique.
	Name string `json:"name"`
	// Extra is free-form user metadata.
	Extra map[string]any `json:"extra"`
	// Steps are the deploy_template_steps rows.
	Steps []DeployTemplateStep `json:"steps"`
}

// DeployTemplateStep is a row of deploy_template_steps.
type DeployTemplateStep struct {
	ID               int64      `json:"id"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        *time.Time `json:"updated_at"`
	Version          string     `json:"version,omitempty"`
	DeployTemplateID int64      `json:"deploy_template_id"`
	// Interface is the driver interface the step belongs to.
	Interface string `json:"interface"`
	// Step is the step's method name.
	Step string `json:"step"`
	// Args are the step's keyword arguments.
	Args map[string]any `json:"args"`
	// Priority orders the step among deploy steps; 0 disables it.
	Priority int `json:"priority"`
}

// Runbook is a row of runbooks with its steps and traits: a named, ordered
// list of steps for manual cleaning or servicing.
type Runbook struct {
	ID        int64      `json:"id"`
	UUID      string     `json:"uuid"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// Name is the runbook's unique name (a trait-like string).
	Name string `json:"name"`
	// Description is free text.
	Description *string `json:"description"`
	// Public makes the runbook usable by every project.
	Public bool `json:"public"`
	// Owner is the project owning the runbook.
	Owner *string `json:"owner"`
	// DisableRamdisk runs the steps without booting the agent ramdisk.
	DisableRamdisk bool `json:"disable_ramdisk"`
	// Extra is free-form user metadata.
	Extra map[string]any `json:"extra"`
	// Steps are the runbook_steps rows, in Order.
	Steps []RunbookStep `json:"steps"`
	// Traits are the runbook_traits rows.
	Traits []RunbookTrait `json:"traits"`
}

// RunbookStep is a row of runbook_steps.
type RunbookStep struct {
	ID        int64      `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`
	RunbookID int64      `json:"runbook_id"`
	// Interface is the driver interface the step belongs to.
	Interface string `json:"interface"`
	// Step is the step's method name.
	Step string `json:"step"`
	// Args are the step's keyword arguments.
	Args map[string]any `json:"args"`
	// Order is the step's position in the runbook.
	Order int `json:"order"`
}

// RunbookTrait is a row of runbook_traits.
type RunbookTrait struct {
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`
	RunbookID int64      `json:"runbook_id"`
	Trait     string     `json:"trait"`
}
