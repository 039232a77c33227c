"""Simulated BlueZ 5.66 (org.bluez on a private D-Bus) for blectl's tests."""
