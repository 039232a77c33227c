"""Which of world.py's devices this run knows and which of them advertise, as the faults
(switches such as echo_device, dual_mode_device, advertisers) decide (mixed into core.Sim)."""

from . import world


class Catalogue:
    """Expects of the Sim: faults."""

    # ------------------------------------------------------------ devices
    def all_specs(self):
        specs = world.default_devices() + world.filler_devices() + world.cached_devices() + world.bonded_devices()
        specs += world.foreign_devices() + world.weird_devices() + world.toolbox_devices() + world.secure_devices()
        specs += world.echo_devices() + world.dual_devices(self.dual_variant() or "inquiry") + world.battery_devices()
        specs += world.hidden_devices() + world.twin_dis_devices()
        return specs

    def dual_variant(self):
        """The dual_mode_device variant, "" when off (an unknown value counts as "inquiry")."""
        v = self.faults.get("dual_mode_device")
        if not v or v.lower() in ("0", "false", "no", "off"):
            return ""
        return v if v in world.DUAL_VARIANTS else "inquiry"

    def find_spec(self, address):
        for s in self.all_specs():
            if s.address == address:
                return s
        n = self.faults.get("advertisers")
        for s in world.bench_devices(n, False):
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
        if self.dual_variant():
            specs += world.dual_devices(self.dual_variant())
        return specs

    def is_advertising(self, address):
        if any(s.address == address for s in self.advertisers()):
            return True
        n = self.faults.get("advertisers")
        return address.startswith("D0:00:") and n > 0 and any(s.address == address for s in world.bench_devices(n, False))
