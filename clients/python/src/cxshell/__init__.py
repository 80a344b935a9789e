"""Drive and read a cxshell world of simulated phones from Python tests.

    with cxshell.World.start() as world:
        phone = world.devices.create("android")[0]
        ...  # your backend sends through world.proxy_env()
        entry = world.wait_for(source="fcm", device=phone.id)

Docs/Clients.md in the cxshell repository describes every call.
"""

from ._errors import WorldError
from ._world import Credentials, Device, Devices, World

__all__ = ["World", "Device", "Devices", "Credentials", "WorldError"]
