package com.acme.mq;

import org.apache.rocketmq.spring.annotation.MessageModel;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.springframework.stereotype.Component;

// The shared module's listener: it runs in every application module that depends on shop-mq.
@Component
@RocketMQMessageListener(topic = "reset-config", consumerGroup = "reset-config-cache", messageModel = MessageModel.BROADCASTING)
public class ResetConfigListener implements RocketMQListener<String> {
    @Override
    public void onMessage(String message) {}
}
