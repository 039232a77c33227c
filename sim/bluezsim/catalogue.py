"""Which of world.py's devices this run knows and which of them advertise, as the faults
(switches such as echo_device, dual_mode_device, advertisers) decide (mixed into core.Sim)."""

from . import beacons, field_devices, fleet, world


class Catalogue:
    """Expects of the Sim: faults, device_faults, has_device_fault()."""

    # ------------------------------------------------------------ devices
    def all_specs(self):
        specs = world.default_devices() + world.filler_devices() + world.cached_devices() + world.bonded_devices()
        specs += world.foreign_devices() + world.weird_devices() + world.toolbox_devices() + world.secure_devices()
        specs += world.echo_devices() + world.dual_devices(self.dual_variant() or "inquiry") + world.battery_devices()
        specs += world.hidden_devices() + world.twin_dis_devices() + beacons.beacon_devices()
        specs += field_devices.aliased_devices() + field_devices.claimed_write_devices() + field_devices.sensor_devices()
        return specs

    def dual_variant(self):
        """The dual_mode_device variant, "" when off (an unknown value counts as "inquiry")."""
        v = self.faults.get("dual_mode_device")
        if not v or v.lower() in ("0", "false", "no", "off"):
            return ""
        return v if v in world.DUAL_VARIANTS else "inquiry"

    def find_spec(self, address):
        i = fleet.index(address)
        if i is not None:
            return fleet.spec(i) if i <= self.faults.get("fleet") else None
        for s in self.all_specs():
            if s.address == address:
                return s
        n = self.faults.get("advertisers")
        for s in world.bench_devices(n, False, self.faults.get("advertisers_data")):
            if s.address == address:
                return s
        return None

    def advertisers(self):
        specs = world.default_devices() + world.filler_devices()
        if self.faults.get("foreign_filter"):
            specs += world.foreign_devices()
        if self.faults.get("weird_names"):
            specs += world.weird_devices()
        if self.faults.get("echo_device"):
            specs += world.echo_devices()
        if self.faults.get("toolbox_device"):
            specs += world.toolbox_devices()
        if self.faults.get("battery_devices"):
            specs += world.battery_devices()
        if self.faults.get("secure_device"):
            specs += world.secure_devices()
        if self.faults.get("hidden_device"):
            specs += world.hidden_devices()
        if self.faults.get("twin_dis_device"):
            specs += world.twin_dis_devices()
        if self.faults.get("aliased_device"):
            specs += field_devices.aliased_devices()
        if self.faults.get("claimed_write_device"):
            specs += field_devices.claimed_write_devices()
        if self.faults.get("sensor_device"):
            specs += field_devices.sensor_devices()
        if self.faults.get("beacons"):
            specs += beacons.beacon_devices()
        if self.dual_variant():
            specs += world.dual_devices(self.dual_variant())
        specs += fleet.devices(self.faults.get("fleet"))
        absent = [a for a, kinds in self.device_faults.items() if "absent" in kinds or "silent" in kinds]
        if absent:
            specs = [s for s in specs if s.address not in absent]
        return specs

    def is_advertising(self, address):
        if self.has_device_fault(address, "absent") or self.has_device_fault(address, "silent"):
            return False
        i = fleet.index(address)
        if i is not None:
            return i <= self.faults.get("fleet")
        if any(s.address == address for s in self.advertisers()):
            return True
        n = self.faults.get("advertisers")
        return address.startswith("D0:00:") and n > 0 and any(s.address == address for s in world.bench_devices(n, False, self.faults.get("advertisers_data")))
