package pxe

// upstreamOutput holds what upstream's templates produce for the inputs the
// tests in this package use. Each text was derived by rendering the named
// template of openstack/ironic 7bc6aba7dda0 (ironic/drivers/modules/) with
// Jinja2 3.1 the way ironic.common.utils.render_template does
// (SandboxedEnvironment, FileSystemLoader, select_autoescape(), default
// Undefined, hence no trailing newline), with the pxe_options upstream's
// build_pxe_config_options and create_pxe_config build for node
// 1be26c0b-03f2-4d2e-ae87-c02d7f33c123:
//
//   - deployment_aki_path / deployment_ari_path: "<uuid>/deploy_kernel" for
//     pxe (relative to tftp_root), "../http/<uuid>/deploy_kernel" for http
//     (http_root relative to tftp_root, both under one temporary directory),
//     "http://127.0.0.1:8080/<uuid>/deploy_kernel" for ipxe;
//   - aki_path "no_kernel", ari_path "no_ramdisk" (local boot);
//   - pxe_append_params "nofb vga=normal ipa-api-url=http://127.0.0.1:6385
//     ipa-standalone", tftp_server "192.0.2.1", ipxe_timeout 0 (5000 for
//     ipxeTimeout), initrd_filename "deploy_ramdisk" for ipxe;
//   - linux_cmd "linux" and initrd_cmd "initrd", ROOT "(( ROOT ))" and
//     DISK_IDENTIFIER "(( DISK_IDENTIFIER ))" for GRUB, "{{ ... }}" else;
//   - boot.ipxe: ipxe_for_mac_uri "pxelinux.cfg/", ipxe_fallback_script ""
//     or "http://127.0.0.1:8080/inspector.ipxe".
//
// The boot.ipxe texts leave out upstream's "#" comment lines (not the
// "#!ipxe" header): comments do not change what iPXE does, and ours are
// our own words; tests drop comment lines from both sides.
//
// The ramdisk instance texts (pxeRamdisk*, ipxeRamdisk, ipxeBootISO) are
// what upstream's prepare_instance leaves for a node of the ramdisk
// deploy interface: build_pxe_config_options(service=True), hence no
// deployment_aki_path or deployment_ari_path, with aki_path and ari_path
// "<uuid>/kernel" and "<uuid>/ramdisk" (tftp_root relative) or
// "http://127.0.0.1:8080/<uuid>/kernel" and ".../ramdisk" (iPXE), or, for
// a boot_iso, "no_kernel", "no_ramdisk" and boot_iso_url
// "http://127.0.0.1:8080/<uuid>/boot_iso"; ramdisk_opts "console=ttyS0"
// (instance_info ramdisk_kernel_arguments), pxe_append_params
// "nofb vga=normal", tftp_server "192.0.2.1", ipxe_timeout 0; rendered by
// create_pxe_config as above, then switched to boot_ramdisk by
// deploy_utils.switch_pxe_config (its _replace_boot_line regular
// expressions applied line by line).
//
// The netboot fallback texts (fallback*) are what upstream's
// prepare_instance leaves for a local boot with
// [pxe]/enable_netboot_fallback: build_service_pxe_config writes the
// service mode configuration (aki_path "no_kernel", ari_path
// "no_ramdisk", no ramdisk_opts), then switch_pxe_config replaces the
// DISK_IDENTIFIER with driver_internal_info root_uuid_or_disk_id
// "0x1234abcd" and switches to boot_whole_disk.
//
// Every text here was checked again on 2026-12-01 by rendering upstream's
// templates at that commit with Jinja2 3.1.6 and comparing byte for byte.
var upstreamOutput = map[string]string{
	// pxeBIOS: pxe_config.template
	"pxeBIOS": `default deploy

label deploy
kernel 1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_kernel
append initrd=1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_ramdisk selinux=0 troubleshoot=0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone
ipappend 2

label boot_whole_disk
COM32 chain.c32
append mbr:{{ DISK_IDENTIFIER }}

label boot_ramdisk
kernel no_kernel
append initrd=no_ramdisk root=/dev/ram0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone 

label boot_anaconda
kernel no_kernel
append initrd=no_ramdisk text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone inst.ks= inst.stage2=
ipappend 2`,
	// pxeUEFI: pxe_grub_config.template
	"pxeUEFI": `set default=deploy
set timeout=5
set hidden_timeout_quiet=false

menuentry "deploy"  {
    linux 1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_kernel selinux=0 troubleshoot=0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone boot_server=192.0.2.1
    initrd 1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_ramdisk
}

menuentry "boot_ramdisk"  {
    linux no_kernel root=/dev/ram0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone 
    initrd no_ramdisk
}

menuentry "boot_whole_disk"  {
    linux chain.c32 mbr:(( DISK_IDENTIFIER ))
}

menuentry "boot_anaconda" {
     linux no_kernel text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone inst.ks= inst.stage2=
     initrd no_ramdisk
}`,
	// httpBIOS: pxe_config.template
	"httpBIOS": `default deploy

label deploy
kernel ../http/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_kernel
append initrd=../http/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_ramdisk selinux=0 troubleshoot=0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone
ipappend 2

label boot_whole_disk
COM32 chain.c32
append mbr:{{ DISK_IDENTIFIER }}

label boot_ramdisk
kernel no_kernel
append initrd=no_ramdisk root=/dev/ram0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone 

label boot_anaconda
kernel no_kernel
append initrd=no_ramdisk text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone inst.ks= inst.stage2=
ipappend 2`,
	// httpUEFI: pxe_grub_config.template
	"httpUEFI": `set default=deploy
set timeout=5
set hidden_timeout_quiet=false

menuentry "deploy"  {
    linux ../http/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_kernel selinux=0 troubleshoot=0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone boot_server=192.0.2.1
    initrd ../http/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_ramdisk
}

menuentry "boot_ramdisk"  {
    linux no_kernel root=/dev/ram0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone 
    initrd no_ramdisk
}

menuentry "boot_whole_disk"  {
    linux chain.c32 mbr:(( DISK_IDENTIFIER ))
}

menuentry "boot_anaconda" {
     linux no_kernel text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone inst.ks= inst.stage2=
     initrd no_ramdisk
}`,
	// ipxe: ipxe_config.template
	"ipxe": `#!ipxe

set attempts:int32 10
set i:int32 0

goto deploy

:deploy
imgfree
kernel http://127.0.0.1:8080/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_kernel selinux=0 troubleshoot=0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone BOOTIF=${mac} initrd=deploy_ramdisk || goto retry

initrd http://127.0.0.1:8080/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_ramdisk || goto retry
boot

:retry
iseq ${i} ${attempts} && goto fail ||
inc i
echo No response, retrying in ${i} seconds.
sleep ${i}
goto deploy

:fail
echo Failed to get a response after ${attempts} attempts
echo Powering off in 30 seconds.
sleep 30
poweroff

:boot_anaconda
imgfree
kernel no_kernel text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone inst.ks= inst.stage2= initrd=ramdisk || goto boot_anaconda
initrd no_ramdisk || goto boot_anaconda
boot

:boot_ramdisk
imgfree
kernel no_kernel root=/dev/ram0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone  initrd=ramdisk || goto boot_ramdisk
initrd no_ramdisk || goto boot_ramdisk
boot

:boot_whole_disk
sanboot --no-describe || exit 0`,
	// ipxeTimeout: ipxe_config.template
	"ipxeTimeout": `#!ipxe

set attempts:int32 10
set i:int32 0

goto deploy

:deploy
imgfree
kernel --timeout 5000 http://127.0.0.1:8080/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_kernel selinux=0 troubleshoot=0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone BOOTIF=${mac} initrd=deploy_ramdisk || goto retry

initrd --timeout 5000 http://127.0.0.1:8080/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/deploy_ramdisk || goto retry
boot

:retry
iseq ${i} ${attempts} && goto fail ||
inc i
echo No response, retrying in ${i} seconds.
sleep ${i}
goto deploy

:fail
echo Failed to get a response after ${attempts} attempts
echo Powering off in 30 seconds.
sleep 30
poweroff

:boot_anaconda
imgfree
kernel --timeout 5000 no_kernel text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone inst.ks= inst.stage2= initrd=ramdisk || goto boot_anaconda
initrd --timeout 5000 no_ramdisk || goto boot_anaconda
boot

:boot_ramdisk
imgfree
kernel --timeout 5000 no_kernel root=/dev/ram0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone  initrd=ramdisk || goto boot_ramdisk
initrd --timeout 5000 no_ramdisk || goto boot_ramdisk
boot

:boot_whole_disk
sanboot --no-describe || exit 0`,
	// pxeRescueBIOS: pxe_config.template
	"pxeRescueBIOS": `default deploy

label deploy
kernel 1be26c0b-03f2-4d2e-ae87-c02d7f33c123/rescue_kernel
append initrd=1be26c0b-03f2-4d2e-ae87-c02d7f33c123/rescue_ramdisk selinux=0 troubleshoot=0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone
ipappend 2

label boot_whole_disk
COM32 chain.c32
append mbr:{{ DISK_IDENTIFIER }}

label boot_ramdisk
kernel no_kernel
append initrd=no_ramdisk root=/dev/ram0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone 

label boot_anaconda
kernel no_kernel
append initrd=no_ramdisk text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone inst.ks= inst.stage2=
ipappend 2`,
	// bootScript: boot.ipxe
	"bootScript": `#!ipxe

set netid:int32 -1
:loop
inc netid || chain pxelinux.cfg/${mac:hexhyp} || goto old_rom
isset ${net${netid}/mac} || goto loop_done
echo Attempting to boot from MAC ${net${netid}/mac:hexhyp}
chain pxelinux.cfg/${net${netid}/mac:hexhyp} || goto loop

echo Exiting pxe config to allow boot to continue on next device
exit 0

:loop_done
echo PXE boot failed! No configuration found for any of the present NICs.
echo Press any key to reboot...
prompt --timeout 180
reboot

:old_rom
echo PXE boot failed! No configuration found for NIC ${mac:hexhyp}.
echo Please update your iPXE ROM and retry.
echo Press any key to reboot...
prompt --timeout 180
reboot`,
	// bootScriptFallback: boot.ipxe
	"bootScriptFallback": `#!ipxe

set netid:int32 -1
:loop
inc netid || chain pxelinux.cfg/${mac:hexhyp} || goto old_rom
isset ${net${netid}/mac} || goto loop_done
echo Attempting to boot from MAC ${net${netid}/mac:hexhyp}
chain pxelinux.cfg/${net${netid}/mac:hexhyp} || goto loop

echo Exiting pxe config to allow boot to continue on next device
exit 0

:loop_done
chain http://127.0.0.1:8080/inspector.ipxe | goto boot_failed

:boot_failed
echo PXE boot failed! No configuration found for any of the present NICs.
echo Press any key to reboot...
prompt --timeout 180
reboot

:old_rom
chain http://127.0.0.1:8080/inspector.ipxe | goto boot_failed_old_rom

:boot_failed_old_rom
echo PXE boot failed! No configuration found for NIC ${mac:hexhyp}.
echo Please update your iPXE ROM and retry.
echo Press any key to reboot...
prompt --timeout 180
reboot`,
	"pxeRamdiskBIOS": `default boot_ramdisk

label deploy
kernel 
append initrd= selinux=0 troubleshoot=0 text nofb vga=normal
ipappend 2

label boot_whole_disk
COM32 chain.c32
append mbr:{{ DISK_IDENTIFIER }}

label boot_ramdisk
kernel 1be26c0b-03f2-4d2e-ae87-c02d7f33c123/kernel
append initrd=1be26c0b-03f2-4d2e-ae87-c02d7f33c123/ramdisk root=/dev/ram0 text nofb vga=normal console=ttyS0

label boot_anaconda
kernel 1be26c0b-03f2-4d2e-ae87-c02d7f33c123/kernel
append initrd=1be26c0b-03f2-4d2e-ae87-c02d7f33c123/ramdisk text nofb vga=normal inst.ks= inst.stage2=
ipappend 2`,
	"pxeRamdiskUEFI": `set default=boot_ramdisk
set timeout=5
set hidden_timeout_quiet=false

menuentry "deploy"  {
    linux  selinux=0 troubleshoot=0 text nofb vga=normal boot_server=192.0.2.1
    initrd 
}

menuentry "boot_ramdisk"  {
    linux 1be26c0b-03f2-4d2e-ae87-c02d7f33c123/kernel root=/dev/ram0 text nofb vga=normal console=ttyS0
    initrd 1be26c0b-03f2-4d2e-ae87-c02d7f33c123/ramdisk
}

menuentry "boot_whole_disk"  {
    linux chain.c32 mbr:(( DISK_IDENTIFIER ))
}

menuentry "boot_anaconda" {
     linux 1be26c0b-03f2-4d2e-ae87-c02d7f33c123/kernel text nofb vga=normal inst.ks= inst.stage2=
     initrd 1be26c0b-03f2-4d2e-ae87-c02d7f33c123/ramdisk
}`,
	"ipxeRamdisk": `#!ipxe

set attempts:int32 10
set i:int32 0

goto boot_ramdisk

:deploy
imgfree
kernel  selinux=0 troubleshoot=0 text nofb vga=normal BOOTIF=${mac} initrd=deploy_ramdisk || goto retry

initrd  || goto retry
boot

:retry
iseq ${i} ${attempts} && goto fail ||
inc i
echo No response, retrying in ${i} seconds.
sleep ${i}
goto boot_ramdisk

:fail
echo Failed to get a response after ${attempts} attempts
echo Powering off in 30 seconds.
sleep 30
poweroff

:boot_anaconda
imgfree
kernel http://127.0.0.1:8080/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/kernel text nofb vga=normal inst.ks= inst.stage2= initrd=ramdisk || goto boot_anaconda
initrd http://127.0.0.1:8080/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/ramdisk || goto boot_anaconda
boot

:boot_ramdisk
imgfree
kernel http://127.0.0.1:8080/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/kernel root=/dev/ram0 text nofb vga=normal console=ttyS0 initrd=ramdisk || goto boot_ramdisk
initrd http://127.0.0.1:8080/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/ramdisk || goto boot_ramdisk
boot

:boot_whole_disk
sanboot --no-describe || exit 0`,
	"ipxeBootISO": `#!ipxe

set attempts:int32 10
set i:int32 0

goto boot_ramdisk

:deploy
imgfree
kernel  selinux=0 troubleshoot=0 text nofb vga=normal BOOTIF=${mac} initrd=deploy_ramdisk || goto retry

initrd  || goto retry
boot

:retry
iseq ${i} ${attempts} && goto fail ||
inc i
echo No response, retrying in ${i} seconds.
sleep ${i}
goto boot_ramdisk

:fail
echo Failed to get a response after ${attempts} attempts
echo Powering off in 30 seconds.
sleep 30
poweroff

:boot_anaconda
imgfree
kernel no_kernel text nofb vga=normal inst.ks= inst.stage2= initrd=ramdisk || goto boot_anaconda
initrd no_ramdisk || goto boot_anaconda
boot

:boot_ramdisk
imgfree
sanboot http://127.0.0.1:8080/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/boot_iso

:boot_whole_disk
sanboot --no-describe || exit 0`,
	"fallbackBIOS": `default boot_whole_disk

label deploy
kernel 
append initrd= selinux=0 troubleshoot=0 text nofb vga=normal
ipappend 2

label boot_whole_disk
COM32 chain.c32
append mbr:0x1234abcd

label boot_ramdisk
kernel no_kernel
append initrd=no_ramdisk root=/dev/ram0 text nofb vga=normal 

label boot_anaconda
kernel no_kernel
append initrd=no_ramdisk text nofb vga=normal inst.ks= inst.stage2=
ipappend 2`,
	"fallbackUEFI": `set default=boot_whole_disk
set timeout=5
set hidden_timeout_quiet=false

menuentry "deploy"  {
    linux  selinux=0 troubleshoot=0 text nofb vga=normal boot_server=192.0.2.1
    initrd 
}

menuentry "boot_ramdisk"  {
    linux no_kernel root=/dev/ram0 text nofb vga=normal 
    initrd no_ramdisk
}

menuentry "boot_whole_disk"  {
    linux chain.c32 mbr:0x1234abcd
}

menuentry "boot_anaconda" {
     linux no_kernel text nofb vga=normal inst.ks= inst.stage2=
     initrd no_ramdisk
}`,
	"fallbackIPXE": `#!ipxe

set attempts:int32 10
set i:int32 0

goto boot_whole_disk

:deploy
imgfree
kernel  selinux=0 troubleshoot=0 text nofb vga=normal BOOTIF=${mac} initrd=deploy_ramdisk || goto retry

initrd  || goto retry
boot

:retry
iseq ${i} ${attempts} && goto fail ||
inc i
echo No response, retrying in ${i} seconds.
sleep ${i}
goto boot_whole_disk

:fail
echo Failed to get a response after ${attempts} attempts
echo Powering off in 30 seconds.
sleep 30
poweroff

:boot_anaconda
imgfree
kernel no_kernel text nofb vga=normal inst.ks= inst.stage2= initrd=ramdisk || goto boot_anaconda
initrd no_ramdisk || goto boot_anaconda
boot

:boot_ramdisk
imgfree
kernel no_kernel root=/dev/ram0 text nofb vga=normal  initrd=ramdisk || goto boot_ramdisk
initrd no_ramdisk || goto boot_ramdisk
boot

:boot_whole_disk
sanboot --no-describe || exit 0`,
}
