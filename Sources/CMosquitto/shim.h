#ifndef CX_MOSQUITTO_SHIM_H
#define CX_MOSQUITTO_SHIM_H
/* libmosquitto from the system (Debian: libmosquitto-dev): the MQTT client an app's
   Appwrite SDK is played with, and the backend's publisher in scenarios. */
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif
