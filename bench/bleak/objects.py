"""bleak's start-up floor: import bleak, connect to the system bus and get BlueZ's
object tree the way bleak does (its global BlueZManager: AddMatch + GetManagedObjects)."""
import asyncio

import bleak  # noqa: F401  (the import is part of the cost)
from bleak.backends.bluezdbus.manager import get_global_bluez_manager


async def main():
    await get_global_bluez_manager()


asyncio.run(main())
