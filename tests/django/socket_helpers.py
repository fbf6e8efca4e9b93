"""What the socket tests share."""

from typing import Any

from channels.testing import WebsocketCommunicator


async def turned_away(socket: WebsocketCommunicator) -> Any:
    """Connect; return the code the socket was turned away with: the handshake's (the Origin
    check, a path no route serves) or the close right after the accept (web.sockets.refuse,
    which a browser can read); "open" when its first message is not a close."""
    connected, code = await socket.connect(timeout=5)
    if not connected:
        return code
    output = await socket.receive_output(timeout=5)
    await socket.disconnect()
    return output.get("code") if output["type"] == "websocket.close" else "open"
